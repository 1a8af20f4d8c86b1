"""The Compose `lb` profile, checked without a Docker engine: a second proxy and HAProxy in front
of both (docs/operations.md, "Running several proxies"). On demand only; the second proxy is the
first's image and config; HAProxy is pinned, published on the host's loopback, balances TCP
connections over exactly the stack's proxies and checks each on its /readyz; and where Debian's
`haproxy` is installed (.ci/run installs it) HAProxy itself accepts the config."""
import re
import shutil
import subprocess

import pytest

from test_compose import ROOT, STACKS, published_ports, resolved

CONFIG = ROOT / "deploy" / "haproxy" / "haproxy.cfg"


def directives(section):
    """The lines of one section of haproxy.cfg (`backend fle-proxies`), comments and blanks left out."""
    lines, inside = [], False
    for raw in CONFIG.read_text().splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line:
            continue
        if not raw.startswith((" ", "\t")):
            inside = line.strip() == section
            continue
        if inside:
            lines.append(line.strip())
    return lines


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_the_lb_profile_puts_haproxy_in_front_of_two_proxies(stack):
    services = resolved(stack)["services"]
    first, second, lb = services["proxy"], services["proxy-2"], services["haproxy"]
    assert second["profiles"] == ["lb"] and lb["profiles"] == ["lb"], "started only with --profile lb"
    assert "profiles" not in first
    assert second["image"] == first["image"] and second["volumes"] == first["volumes"], "the same proxy, twice"
    assert second["healthcheck"]["test"] == first["healthcheck"]["test"]
    assert re.fullmatch(r"haproxy:\d+\.\d+\.\d+", lb["image"]), lb["image"]
    assert published_ports(lb) == ["127.0.0.1:27020:27020/tcp"], "on the host's loopback, as the proxy"
    assert any(v.startswith(str(ROOT / "deploy" / "haproxy") + ":/usr/local/etc/haproxy") for v in lb["volumes"])
    for name, s in services.items():  # without the profile, nothing of it starts
        if "lb" not in s.get("profiles", []):
            assert not set(s.get("depends_on", {})) & {"proxy-2", "haproxy"}, name

    assert "mode tcp" in directives("defaults"), "connections are balanced, never requests"
    backend = directives("backend fle-proxies")
    servers = [l.split()[1:3] for l in backend if l.startswith("server ")]
    listen = "27018"  # deploy/proxy/proxy.yaml's listen port
    assert servers == [["proxy-1", f"proxy:{listen}"], ["proxy-2", f"proxy-2:{listen}"]]
    assert "option httpchk GET /readyz" in backend and "http-check expect status 200" in backend
    assert any(l.startswith("default-server check port 9464") and "shutdown-sessions" in l for l in backend)
    assert directives("frontend mongodb")[0] == "bind :27020"


HAPROXY = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")  # Debian puts it there


@pytest.mark.skipif(HAPROXY is None, reason="haproxy (Debian package haproxy) is not installed")
def test_haproxy_accepts_the_config():
    # the server names resolve only inside the stack's network: checked, not looked up
    text = CONFIG.read_text().replace("proxy-2:27018", "127.0.0.1:27019").replace("proxy:27018", "127.0.0.1:27018")
    r = subprocess.run([HAPROXY, "-c", "-f", "/dev/stdin"], input=text, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
