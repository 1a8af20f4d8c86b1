#!/usr/bin/env python3
"""The MongoDB drivers' unified CRUD spec tests through the encrypting proxy (`make test-crud-spec`).

pymongo's own unified test runner (test/test_crud_unified.py over test/crud/unified/*.json, from
its source distribution on PyPI, the same version as the pymongo installed) runs three times, each
against a fresh embedded backend:
  direct         the backend itself: what the backend can do at all, the baseline;
  randomized     the proxy, with field `x` encrypted (randomized) on every collection the spec
                 files name;
  deterministic  the same with `x` deterministic.
`x` is the field nearly every CRUD spec document carries, so the filters, updates, sorts and
pipelines of the tests touch an encrypted field. The summary (results/crud-spec/summary.md by
default) gives each mode's counts and every test that passes directly but fails through the
proxy, with its reason; JUnit files, pytest output and process logs stay in build/crud-spec/.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pymongo

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
MODES = ("direct", "randomized", "deterministic")


def fetch_sdist(version: str, cache: Path) -> Path:
    """pymongo's sdist, downloaded once into the cache and unpacked there: it is the only published
    form of pymongo that carries its test/ directory (the wheels do not)."""
    tree = cache / f"pymongo-{version}"
    if (tree / "test" / "crud" / "unified").is_dir():
        return tree
    archive = cache / f"pymongo-{version}.tar.gz"
    if not archive.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
                        f"pymongo=={version}", "-d", str(cache)], check=True)
    with tarfile.open(archive) as t:
        t.extractall(cache, filter="data")
    if not (tree / "test" / "crud" / "unified").is_dir():
        raise SystemExit(f"{archive} has no test/crud/unified: not a pymongo sdist with its tests")
    return tree


def spec_namespaces(spec_dir: Path) -> list[str]:
    """Every db.collection that a spec file creates as an entity, fills as initial data or expects
    in an outcome (the $out and $merge targets): an $out from a collection with x encrypted into
    one without is refused by the proxy (docs/query-model.md, "$out and $merge")."""
    found = set()
    for f in sorted(spec_dir.glob("*.json")):
        spec = json.loads(f.read_text())
        databases = {e["database"]["id"]: e["database"]["databaseName"]
                     for e in spec.get("createEntities", []) if "database" in e}
        for e in spec.get("createEntities", []):
            if "collection" in e:
                found.add(f'{databases[e["collection"]["database"]]}.{e["collection"]["collectionName"]}')
        for d in spec.get("initialData", []):
            found.add(f'{d["databaseName"]}.{d["collectionName"]}')
        collections = {e["collection"]["id"]: databases[e["collection"]["database"]]
                       for e in spec.get("createEntities", []) if "collection" in e}
        for t in spec.get("tests", []):
            for d in t.get("outcome") or []:
                found.add(f'{d["databaseName"]}.{d["collectionName"]}')
            for op in t.get("operations", []):
                database = collections.get(op.get("object"))
                for stage in (op.get("arguments") or {}).get("pipeline") or []:
                    target = output_target(stage, database)
                    if target:
                        found.add(target)
    return sorted(found)


def output_target(stage: dict, database: str | None) -> str | None:
    """The db.collection an $out or $merge stage writes to: a user encrypting x on the source
    encrypts it on the target too, or the proxy refuses to store x there in clear."""
    out = stage.get("$out", stage.get("$merge"))
    if isinstance(out, dict):
        out = out.get("into", out)
    if isinstance(out, str):
        return f"{database}.{out}" if database else None
    if isinstance(out, dict) and "coll" in out:
        return f'{out.get("db", database)}.{out["coll"]}'
    return None


def policy(namespaces: list[str], key: str, deterministic: bool) -> str:
    field = "{ deterministic: true }" if deterministic else "{}"
    return "".join(f'  "{ns}": {{ key: {key}, fields: {{ x: {field} }} }}\n' for ns in namespaces)


def run_mode(mode: str, sdist: Path, out: Path, kms: Kms, namespaces: list[str]) -> float:
    """One run of pymongo's unified CRUD tests against a fresh backend, directly or through a proxy;
    its JUnit file is out/mode/junit.xml. Returns the seconds the tests took."""
    from conftest import EncryptingProxy, backend_process
    d = out / mode
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    backend = backend_process(d).start()
    proxy = None
    try:
        port = backend.port
        if mode != "direct":
            proxy = EncryptingProxy(d, backend.port, kms, policy(namespaces, kms.keys["AES-256"],
                                                                 mode == "deterministic"), name="proxy").start()
            port = proxy.port
        # pymongo's test/helpers_shared.py points its whole suite at DB_IP:DB_PORT. Run from the sdist's
        # root so `test` is its package; -c: our settings, not its pyproject's; --rootdir/--confcutdir:
        # so that its test/conftest.py (which connects client_context) is still loaded.
        cmd = [sys.executable, "-m", "pytest", "-q", "-c", str(HERE / "pytest.ini"), "--rootdir", ".",
               "--confcutdir", ".", "-p", "server_shim", "--junitxml", str(d / "junit.xml"),
               "test/test_crud_unified.py"]
        env = {**os.environ, "DB_IP": "127.0.0.1", "DB_PORT": str(port), "PYTHONPATH": str(HERE)}
        start = time.monotonic()
        with open(d / "pytest.out", "wb") as log:
            # exit 1 only says some tests failed: the counts are read from the JUnit file
            rc = subprocess.run(cmd, cwd=sdist, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
        if rc not in (0, 1):
            raise SystemExit(f"{mode}: pytest exited with {rc}, see {d / 'pytest.out'}")
        return time.monotonic() - start
    finally:
        if proxy:
            proxy.stop()
        backend.stop()


def outcomes(junit: Path) -> dict[str, tuple[str, str]]:
    """test id -> (passed|failed|skipped, one-line reason)."""
    result = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        test = tc.get("classname").rsplit(".", 1)[-1] + "::" + tc.get("name")
        state, reason = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                state = "skipped" if child.tag == "skipped" else "failed"
                reason = one_line(child.get("message") or child.text or "")
        result[test] = (state, reason)
    return result


def one_line(message: str) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    line = line.split(", full error: ")[0]  # OperationFailure repeats the whole reply after this
    line = line.removeprefix("pymongo.errors.")
    return line if len(line) <= 320 else line[:317] + "..."


def summary(version: str, results: dict, seconds: dict, namespaces: list[str]) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    lines = ["# pymongo's unified CRUD spec tests through the proxy", "",
             f"pymongo {version}'s unified runner (test/test_crud_unified.py, test/crud/unified/*.json from its "
             f"sdist) against the embedded backend directly and through the proxy with field `x` encrypted "
             f"on the spec files' {len(namespaces)} collections; proxy at commit {commit}, "
             f"{time.strftime('%Y-%m-%d')}, `make test-crud-spec`.", "",
             "Collections: " + ", ".join(f"`{ns}`" for ns in namespaces) + ".", "",
             "| mode | passed | failed | skipped | passed of those passing directly | seconds |",
             "|---|---:|---:|---:|---:|---:|"]
    direct_pass = {t for t, (s, _) in results["direct"].items() if s == "passed"}
    for mode, res in results.items():
        count = {s: sum(1 for v in res.values() if v[0] == s) for s in ("passed", "failed", "skipped")}
        kept = sum(1 for t in direct_pass if res.get(t, ("",))[0] == "passed")
        lines.append(f"| {mode} | {count['passed']} | {count['failed']} | {count['skipped']} | "
                     f"{kept} of {len(direct_pass)} | {seconds[mode]:.0f} |")
    for mode, res in results.items():
        if mode == "direct":
            continue
        lost = sorted(t for t in direct_pass if res.get(t, ("",))[0] != "passed")
        lines += ["", f"## {mode}: pass directly, fail through the proxy ({len(lost)})", ""]
        lines += [f"- `{t}`: {res.get(t, ('missing', 'not run'))[1]}" for t in lost] or ["None."]
        gained = sorted(t for t, (s, _) in res.items() if s == "passed" and t not in direct_pass)
        if gained:
            lines += ["", "Pass through the proxy but not directly: " + ", ".join(f"`{t}`" for t in gained)]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pymongo", default=pymongo.version, help="the pymongo release whose tests run (default: the installed one)")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated, of " + ", ".join(MODES))
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "crud-spec", help="cache, logs and JUnit files")
    ap.add_argument("--summary", type=Path, default=ROOT / "results" / "crud-spec" / "summary.md")
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if not set(modes) <= set(MODES) or "direct" not in modes:
        raise SystemExit(f"--modes: of {', '.join(MODES)}, with direct (the baseline)")

    # the processes are started as proxy/tests starts them, by its fixtures' own helpers
    sys.path.insert(0, str(ROOT / "proxy" / "tests"))
    from conftest import Kms

    sdist = fetch_sdist(args.pymongo, args.out / "cache")
    namespaces = spec_namespaces(sdist / "test" / "crud" / "unified")
    shutil.rmtree(args.out / "kms", ignore_errors=True)
    (args.out / "kms").mkdir(parents=True)
    kms = Kms(args.out / "kms").start() if len(modes) > 1 else None
    results, seconds = {}, {}
    try:
        for mode in modes:
            print(f"crud-spec: {mode} ...", flush=True)
            seconds[mode] = run_mode(mode, sdist, args.out, kms, namespaces)
            results[mode] = outcomes(args.out / mode / "junit.xml")
    finally:
        if kms:
            kms.stop()
    if not any(s == "passed" for s, _ in results["direct"].values()):
        raise SystemExit(f"no test passed directly: see {args.out / 'direct' / 'pytest.out'}")
    text = summary(args.pymongo, results, seconds, namespaces)
    args.summary.parent.mkdir(parents=True, exist_ok=True)
    args.summary.write_text(text)
    print(text + f"\n(written to {args.summary})")


if __name__ == "__main__":
    main()
