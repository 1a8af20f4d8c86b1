"""The Compose stacks, checked without a Docker engine (none runs on the machines these tests run on).

compose_resolve.py does what `docker compose config` does for these files (anchors and merge
keys, variable substitution, the rs6 override merged onto docker-compose.yml) and validates each
file against the Compose Specification's JSON schema (vendored in compose-spec/). The tests read
the result and check what the stacks promise: 3 and 6 data-bearing members, the proxy in front of
mongos, pinned images, healthchecks on what the runner needs, no secrets, an init script whose
member list is the stack's, Dockerfiles that build with CI's own make targets, and the paper's
parameters in the one-command matrix. Where `docker compose` or `docker-compose` is installed,
its own `config` must accept the stacks and agree with the resolver (skipped, saying so, where
neither is).
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

import compose_resolve

ROOT = Path(__file__).resolve().parents[2]
STACKS = {"rs3": ["docker-compose.yml"], "rs6": ["docker-compose.yml", "deploy/compose.rs6.yml"]}
MEMBERS = {"rs3": 3, "rs6": 6}
DOCKERFILES = sorted((ROOT / "deploy" / "docker").glob("*.Dockerfile"))
PAPER_KEYS = {"89d6d529-a2fe-31dd-ae60-3cb35458dcc0", "da6fd698-4681-3bb5-88ad-d1d9d68b1df6",
              "93a7f87f-458c-31be-ad16-d5dfa2fc1bae"}
# Variables the stacks read, cleared so the defaults are what is checked.
STACK_VARIABLES = ("FLE_MEMBER_CPUS", "FLE_MEMBER_MEMORY", "FLE_MEMBER_CACHE_GB", "FLE_PROXY_BIND", "FLE_PROXY_PORT",
                   "FLE_MONGO_GLIBC_TUNABLES")


def stack_env(env=None):
    return {**{k: v for k, v in os.environ.items() if k not in STACK_VARIABLES}, **(env or {})}


def resolved(stack, env=None):
    return compose_resolve.resolve(STACKS[stack], ROOT, stack_env(env))


@pytest.fixture(scope="module", params=sorted(STACKS))
def stack(request):
    return request.param, resolved(request.param)


def compose_cli():
    """`docker compose` (v2) or `docker-compose`, whichever answers; None when neither is installed."""
    if shutil.which("docker"):
        r = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
        if r.returncode == 0:
            return ["docker", "compose"]
    exe = shutil.which("docker-compose")
    return [exe] if exe else None


def published_ports(service):
    """Every published port as "host_ip:published:target/protocol", from the short or the long syntax."""
    out = []
    for p in service.get("ports", []):
        if isinstance(p, dict):
            host_ip, published, target, proto = p.get("host_ip", ""), p.get("published", ""), p["target"], p.get("protocol", "tcp")
        else:
            spec, _, proto = str(p).partition("/")
            parts = spec.rsplit(":", 2)
            host_ip, published, target = ([""] * (3 - len(parts)) + parts)
        out.append(f"{host_ip}:{published}:{target}/{proto or 'tcp'}")
    return out


def command(service) -> list:
    c = service.get("command", [])
    return c.split() if isinstance(c, str) else [str(x) for x in c]


def option(cmd, name):
    return cmd[cmd.index(name) + 1] if name in cmd else None


def members(config, role):
    return {name: s for name, s in config["services"].items() if role in command(s)}


def test_every_stack_follows_the_compose_specification():
    for name in STACKS:
        config = resolved(name)  # each file and the merged stack are validated against the schema
        assert {"services", "volumes"} <= set(config), name
    # the schema is really applied: a misspelt service key or a wrong type is refused
    broken = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    broken["services"]["proxy"]["restart_policy"] = "always"
    with pytest.raises(compose_resolve.ComposeError, match="restart_policy"):
        compose_resolve.validate(broken, "broken")
    broken = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    broken["services"]["proxy"]["ports"] = "27018"
    with pytest.raises(compose_resolve.ComposeError, match="ports"):
        compose_resolve.validate(broken, "broken")


def test_interpolation_follows_the_specification():
    env = {"SET": "x", "EMPTY": ""}
    i = compose_resolve.interpolate_string
    assert i("${SET:-d} ${EMPTY:-d} ${UNSET:-d}", env) == "x d d"
    assert i("${SET-d} ${EMPTY-d} ${UNSET-d}", env) == "x  d"
    assert i("${SET} $SET ${UNSET} $$SET $${SET}", env) == "x x  $SET ${SET}"
    assert i("${SET:+alt}|${EMPTY:+alt}|${EMPTY+alt}|${UNSET+alt}", env) == "alt||alt|"
    assert i("${UNSET:-${SET}}", env) == "x"
    for bad in ("${UNSET:?needed}", "${EMPTY:?needed}", "${UNSET?needed}"):
        with pytest.raises(compose_resolve.ComposeError, match="needed"):
            i(bad, env)
    assert i("${EMPTY?needed}", env) == ""
    with pytest.raises(compose_resolve.ComposeError):
        i("${not valid}", env)


def test_the_override_merges_as_compose_merges():
    base = {"services": {"a": {"image": "i:1", "command": ["x", "y"], "environment": ["A=1", "B=2"],
                               "ports": ["1:1"], "volumes": ["v:/data", "w:/other"], "depends_on": ["b"],
                               "healthcheck": {"test": ["CMD", "old"], "interval": "5s"}}},
            "volumes": {"v": None}}
    over = {"services": {"a": {"command": ["z"], "environment": {"B": "3", "C": "4"}, "ports": ["2:2"],
                               "volumes": ["u:/data"], "depends_on": {"c": {"condition": "service_healthy"}},
                               "healthcheck": {"test": ["CMD", "new"]}},
                         "c": {"image": "c:1"}},
            "volumes": {"u": None}}
    merged = compose_resolve.merge(base, over)
    a = merged["services"]["a"]
    assert a["command"] == ["z"] and a["image"] == "i:1"
    assert a["environment"] == {"A": "1", "B": "3", "C": "4"}
    assert a["ports"] == ["1:1", "2:2"]
    assert a["volumes"] == ["u:/data", "w:/other"], "merged by container path"
    assert a["depends_on"] == {"b": {"condition": "service_started"}, "c": {"condition": "service_healthy"}}
    assert a["healthcheck"] == {"test": ["CMD", "new"], "interval": "5s"}
    assert set(merged["services"]) == {"a", "c"} and set(merged["volumes"]) == {"u", "v"}


def _bytes(size):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)b?", str(size).strip().lower())
    return int(float(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " "))


def essentials(config):
    """What both `config` outputs and the resolver must agree on, in one normal form."""
    out = {}
    for name, s in config["services"].items():
        volumes = []
        for v in s.get("volumes", []):
            if isinstance(v, dict):
                volumes.append((str(v.get("source")), v["target"], bool(v.get("read_only"))))
            else:
                parts = v.split(":")
                volumes.append((parts[0], parts[1], len(parts) > 2 and "ro" in parts[2].split(",")))
        depends = s.get("depends_on", {})
        depends = {d: (c or {}).get("condition", "service_started") for d, c in depends.items()} \
            if isinstance(depends, dict) else {d: "service_started" for d in depends}
        out[name] = {
            "image": s.get("image"), "command": command(s), "profiles": s.get("profiles", []),
            "environment": {k: str(v) for k, v in compose_resolve._as_mapping(s.get("environment", {})).items()},
            "depends_on": depends, "ports": sorted(published_ports(s)), "volumes": sorted(volumes),
            "healthcheck": [str(t) for t in s.get("healthcheck", {}).get("test", [])],
            "cpus": float(s["cpus"]) if "cpus" in s else None,
            "mem_limit": _bytes(s["mem_limit"]) if "mem_limit" in s else None,
            "restart": s.get("restart"),
        }
    return out


def test_docker_compose_accepts_every_stack_and_agrees():
    cli = compose_cli()
    if cli is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed: the stacks were checked against the "
                    "Compose Specification's schema only (test_every_stack_follows_the_compose_specification)")
    for name, files in STACKS.items():
        cmd = cli + ["--project-directory", str(ROOT)] + [a for f in files for a in ("-f", str(ROOT / f))] + ["config"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=stack_env())
        assert r.returncode == 0, f"{name}: {r.stderr}"
        theirs, ours = essentials(yaml.safe_load(r.stdout)), essentials(resolved(name))
        assert theirs.keys() == ours.keys(), name
        for service in ours:
            assert theirs[service] == ours[service], f"{name}: {service}"


def test_data_bearing_members_form_one_replica_set(stack):
    name, config = stack
    shard = members(config, "--shardsvr")
    assert len(shard) == MEMBERS[name]
    assert {option(command(s), "--replSet") for s in shard.values()} == {"rs0"}
    volumes = [v.split(":")[0] for s in shard.values() for v in s["volumes"] if v.split(":")[1] == "/data/db"]
    assert len(set(volumes)) == len(shard) and set(volumes) <= set(config["volumes"]), "one named volume each"
    for s in shard.values():  # the paper's VMs: 4 CPUs, 8 GB
        assert float(s["cpus"]) == 4.0 and s["mem_limit"] == "8g"
        assert s["image"].startswith("mongo:8.0.") and "healthcheck" in s


def test_member_limits_follow_the_environment():
    config = resolved("rs6", env={"FLE_MEMBER_CPUS": "1.5", "FLE_MEMBER_MEMORY": "3g", "FLE_MEMBER_CACHE_GB": "1"})
    for s in members(config, "--shardsvr").values():
        assert float(s["cpus"]) == 1.5 and s["mem_limit"] == "3g"
        assert option(command(s), "--wiredTigerCacheSizeGB") == "1"


def test_the_init_scripts_members_are_the_stacks(stack):
    _, config = stack
    services = config["services"]
    init = services["init"]
    env = init["environment"]
    shard, cfg = members(config, "--shardsvr"), members(config, "--configsvr")
    assert env["FLE_SHARD_MEMBERS"].split(",") == [f"{n}:{option(command(s), '--port')}" for n, s in sorted(shard.items())]
    assert env["FLE_CONFIG_MEMBERS"].split(",") == [f"{n}:{option(command(s), '--port')}" for n, s in sorted(cfg.items())]
    assert env["FLE_SHARD_SET"] == "rs0"
    assert {option(command(s), "--replSet") for s in cfg.values()} == {env["FLE_CONFIG_SET"]}
    assert option(command(services["mongos"]), "--configdb") == f"{env['FLE_CONFIG_SET']}/{env['FLE_CONFIG_MEMBERS']}"
    assert env["FLE_MONGOS"] == f"mongos:{option(command(services['mongos']), '--port')}"
    for n in [*shard, *cfg]:
        assert init["depends_on"][n] == {"condition": "service_healthy"}, n
    # mongos may not listen before init has initiated the config servers' set: waiting for it to be
    # healthy first would never end, so init only has it started and waits for it itself.
    assert init["depends_on"]["mongos"] == {"condition": "service_started"}
    script = command(init)[-1]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in init["volumes"]}
    assert Path(mounts[os.path.dirname(script)]) == ROOT / "deploy" / "mongo"
    assert (ROOT / "deploy" / "mongo" / os.path.basename(script)).is_file()


def proxy_config(config):
    proxy = config["services"]["proxy"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in proxy["volumes"]}
    assert command(proxy) == [] or "--config" in command(proxy)
    with open(Path(mounts["/etc/fle-proxy"]) / "proxy.yaml") as f:
        return proxy, mounts, yaml.safe_load(f)


def test_the_proxys_upstream_is_mongos_and_its_port_is_published(stack):
    _, config = stack
    proxy, mounts, cfg = proxy_config(config)
    assert cfg["upstream"] == f"mongos:{option(command(config['services']['mongos']), '--port')}"
    listen_port = cfg["listen"].rsplit(":", 1)[1]
    assert published_ports(proxy) == [f"127.0.0.1:27018:{listen_port}/tcp"], "published on the host's loopback by default"
    assert cfg["kmip"]["host"] == "kms" and "kms" in config["services"]
    for path in (cfg["kmip"]["ca"], cfg["kmip"]["clientCert"], cfg["kmip"]["clientKey"], cfg["tls"]["cert"],
                 cfg["tls"]["key"]):
        assert os.path.dirname(path) in mounts and mounts[os.path.dirname(path)] == "proxy-credentials"
    assert "allowPlaintextListen" not in cfg, "the published port speaks TLS"
    assert {c["key"] for c in cfg["collections"].values()} == PAPER_KEYS
    assert set(cfg["collections"]) == {"ycsb.usertable_aes", "ycsb.usertable_aria", "ycsb.usertable_3des"}
    assert "envelopeSubtype" not in cfg, "real mongod stores subtype 6, the default"
    published = [s for s, svc in config["services"].items() if svc.get("ports") and not svc.get("profiles")]
    assert published == ["proxy"], "only the encrypting endpoint is reachable from outside the stack"
    # (the observe profile's Prometheus and Grafana publish on the host's loopback: test_observe.py)


def test_the_proxy_port_can_move():
    config = resolved("rs3", env={"FLE_PROXY_BIND": "0.0.0.0", "FLE_PROXY_PORT": "37018"})
    assert published_ports(config["services"]["proxy"]) == ["0.0.0.0:37018:27018/tcp"]


def test_every_image_is_pinned(stack):
    _, config = stack
    for name, s in config["services"].items():
        image = s["image"]
        repo, _, tag = image.rpartition(":")
        # prom/prometheus tags carry a leading v (v2.53.3)
        assert repo and re.fullmatch(r"v?\d+\.\d+\.\d+([._-][\w.]+)?", tag), f"{name}: {image} is not pinned to a version"
    for dockerfile in DOCKERFILES:
        for line in dockerfile.read_text().splitlines():
            if line.startswith("FROM "):
                image = line.split()[1]
                assert re.search(r":\d+\.\d+\.\d+", image), f"{dockerfile.name}: {image} is not pinned"


def test_what_the_runner_needs_is_there_and_healthchecked(stack):
    _, config = stack
    services = config["services"]
    assert services["bench"]["profiles"] == ["bench"], "the runner starts on demand"
    seen, todo = set(), ["bench"]
    while todo:
        for dep, how in services[todo.pop()].get("depends_on", {}).items():
            assert dep in services, dep
            if services[dep].get("restart") == "no":  # a one-shot job: its exit status is its health
                assert how == {"condition": "service_completed_successfully"}, dep
            elif how == {"condition": "service_started"}:  # only init -> mongos, see above
                assert "healthcheck" in services[dep] and "mongos" == dep, dep
            else:
                assert "healthcheck" in services[dep] and how == {"condition": "service_healthy"}, dep
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    assert {"init", "mongos", "proxy", "kms", "cfg-1", "shard-1"} <= seen
    for name, s in services.items():
        if s.get("restart") != "no" and name != "bench":
            assert "healthcheck" in s and s["healthcheck"]["test"][0] == "CMD", f"{name} has no healthcheck"
    # the runner reads the proxy's CPU time per operation from /proc: it shares the proxy's PID namespace
    assert services["bench"]["pid"] == "service:proxy"
    entrypoint = (ROOT / "deploy" / "docker" / "bench-entrypoint.sh").read_text()
    assert "fle-proxy.jar proxy" in entrypoint and "--proxy-pid" in entrypoint


SECRETS = [r"-----BEGIN [A-Z ]*(PRIVATE KEY|CERTIFICATE)", r"(?i)(password|passwd|secret|token)\s*[:=]\s*\S+",
           r"(?i)MONGO_INITDB_ROOT_PASSWORD", r"\b[0-9a-fA-F]{32,}\b"]


def test_no_secrets_or_keys_in_the_stack_files():
    files = [ROOT / f for files in STACKS.values() for f in files] + DOCKERFILES + [
        ROOT / "deploy" / "proxy" / "proxy.yaml", *sorted((ROOT / "deploy" / "docker").glob("*.sh")),
        ROOT / "deploy" / "paper-matrix.sh", ROOT / "deploy" / "mongo" / "init-cluster.js"]
    for path in set(files):
        text = path.read_text()
        for pattern in SECRETS:
            assert not re.search(pattern, text), f"{path.relative_to(ROOT)} matches {pattern}"
    ignored = (ROOT / ".dockerignore").read_text().split()
    # `*.pem` would match only at the context's root; `**/*.pem` matches at any depth
    assert {"**/*.pem", "**/*.key", "**/*.p12", "**/*.jks", ".venv", "results"} <= set(ignored), "the build context keeps secrets out"


def make_prerequisites(target, makefile=ROOT / "Makefile"):
    """The targets `make TARGET` builds, by reading the Makefile's rules (phony aliases included)."""
    rules = {}
    for line in makefile.read_text().splitlines():
        m = re.match(r"^([A-Za-z][\w./-]*)\s*:(?!=)\s*(.*)$", line)
        if m:
            rules.setdefault(m.group(1), []).extend(m.group(2).split())
    closure, todo = set(), [target]
    while todo:
        t = todo.pop()
        if t not in closure:
            closure.add(t)
            todo.extend(rules.get(t, []))
    return closure


def test_dockerfiles_build_with_the_make_targets_ci_runs():
    ci_builds = make_prerequisites("test")
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    for dockerfile in DOCKERFILES:
        text = dockerfile.read_text()
        for target in re.findall(r"RUN make (\S+)", text):
            assert target in ci_builds, f"{dockerfile.name}: make {target} is not part of `make test`"
        assert "mvn " not in text and "pip install" not in text, f"{dockerfile.name} has a build recipe of its own"
        for src in re.findall(r"^COPY (?!--from)(\S+)", text, re.M):
            assert (ROOT / src).exists(), f"{dockerfile.name}: COPY {src} does not exist"
    built = {s["build"]["dockerfile"] for c in map(resolved, STACKS) for s in c["services"].values() if "build" in s}
    assert built == {str(d.relative_to(ROOT)) for d in DOCKERFILES}


def test_scripts_parse():
    for script in [ROOT / "deploy" / "paper-matrix.sh", *sorted((ROOT / "deploy" / "docker").glob("*.sh"))]:
        r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert r.returncode == 0, f"{script.name}: {r.stderr}"
        assert os.access(script, os.X_OK), f"{script.name} is not executable"
    node = shutil.which("node")
    assert node, "node is missing (.ci/run installs it)"
    r = subprocess.run([node, "--check", str(ROOT / "deploy" / "mongo" / "init-cluster.js")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def paper_matrix_dry_run(kernel="6.18.0", **env):
    return subprocess.run([str(ROOT / "deploy" / "paper-matrix.sh")], capture_output=True, text=True, timeout=30,
                          env={**stack_env(), "FLE_DRY_RUN": "1", "FLE_KERNEL_RELEASE": kernel, **env})


def test_the_matrix_refuses_kernels_mongodb_8_crashes_on():
    """MongoDB 8.0 release notes: kernels 6.19 through 7.0.13 (SERVER-121912); no 8.0 tag has a fix."""
    image = re.search(r"^x-mongo-image: &\S+ (\S+)$", (ROOT / "docker-compose.yml").read_text(), re.M).group(1)
    assert image.startswith("mongo:8.0."), "the preflight below is written for MongoDB 8.0 images"
    assert image in (ROOT / "deploy" / "compose.rs6.yml").read_text(), "both files pin the same image"
    for kernel in ("6.19.0", "6.19.11-arch1-1", "7.0.0-30-generic", "7.0.13"):
        r = paper_matrix_dry_run(kernel)
        assert r.returncode == 3 and "6.19 through 7.0.13" in r.stderr and "+ " not in r.stdout, kernel
    for kernel in ("6.18.44-fc-v445", "6.6.87.2-microsoft-standard-WSL2", "7.0.14-12-pve", "7.1.5-arch1-2"):
        assert paper_matrix_dry_run(kernel).returncode == 0, kernel
    worked_around = paper_matrix_dry_run("7.0.0", FLE_MONGO_GLIBC_TUNABLES="glibc.pthread.rseq=1")
    assert worked_around.returncode == 0 and "per-CPU caches" in worked_around.stderr
    assert paper_matrix_dry_run("7.0.0", FLE_IGNORE_KERNEL_CHECK="1").returncode == 0
    for stack in STACKS:  # the workaround reaches every mongod and mongos; the default is the image's own
        for env, expected in (({}, "glibc.pthread.rseq=0"), ({"FLE_MONGO_GLIBC_TUNABLES": "glibc.pthread.rseq=1"},
                                                             "glibc.pthread.rseq=1")):
            services = resolved(stack, env)["services"]
            mongo = [n for n, svc in services.items() if command(svc)[:1] in (["mongod"], ["mongos"])]
            assert len(mongo) == MEMBERS[stack] + 2
            assert all(services[n]["environment"]["GLIBC_TUNABLES"] == expected for n in mongo), (stack, env)


def test_one_command_runs_the_papers_matrix_on_both_stacks():
    r = paper_matrix_dry_run()
    assert r.returncode == 0, r.stderr
    steps = [line[2:].split() for line in r.stdout.splitlines() if line.startswith("+ ")]
    rs3 = ["docker", "compose", "-p", "fle-rs3", "-f", "docker-compose.yml"]
    rs6 = ["docker", "compose", "-p", "fle-rs6", "-f", "docker-compose.yml", "-f", "deploy/compose.rs6.yml"]
    prefixes = [rs3] * 4 + [rs6] * 4
    assert len(steps) == 8 and all(s[:len(p)] == p for s, p in zip(steps, prefixes)), steps
    # `up --build` would not rebuild bench (profile-gated): every image, bench's too, is built first
    assert [s[len(p):][:3] for s, p in zip(steps, prefixes)] == [
        ["--profile", "bench", "build"], ["up", "-d"], ["--profile", "bench", "run"], ["down"]] * 2
    runs = [s for s in steps if "run" in s]
    assert [option(s, "--topology") for s in runs] == ["rs3", "rs6"]
    assert all(option(s, "--out") == "results/paper" for s in runs), "both topologies in one report"
    assert all("--records" not in s and "--threads" not in s for s in runs), "the runner's defaults are the paper's"
    assert all(option(s, "--write-concern") == "w1" for s in runs), "the paper's MongoDB 3.6 default, explicit"

    from deploy.bench import matrix
    a = matrix.parse_args(["--direct", "mongodb://x", "--out", "o"])
    assert (a.records, a.threads, a.operations, a.repeats) == ([1000000, 3000000, 5000000], 100, 100000, 3)
    assert (a.algorithms, a.workloads) == (["direct", "plain", "aes", "aria", "3des"], list("abcdef"))
