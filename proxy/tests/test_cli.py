"""The fat jar's command line: documented options, clear failures."""
import subprocess

from conftest import JAR, backend_process, free_port


def run(*args, timeout=60):
    return subprocess.run(["java", "-jar", str(JAR), *args], capture_output=True, text=True, timeout=timeout)


def test_help_documents_every_proxy_option():
    out = run("proxy", "--help").stdout
    for option in ("--config", "listen: HOST:PORT", "upstream: HOST:PORT", "upstreamConnectTimeoutMs"):
        assert option in out


def test_help_documents_the_backend_and_its_limits():
    out = run("backend", "--help").stdout
    for text in ("--port", "--data", "--host", "subtype", "w:0"):
        assert text in out


def test_a_bad_config_is_one_clear_line_and_exit_code_2(tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("listen: 127.0.0.1:1\nupstream: 127.0.0.1:2\nupstrem: typo:3\n")
    r = run("proxy", "--config", str(cfg))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"fle-proxy: {cfg}: unknown key(s) [upstrem]; known keys are [admin, allowPlaintextListen, audit, clientReadTimeoutMs, collections, envelopeSubtype, identities, instance, kmip, listen, "
        "maxBufferedMessageBytes, maxConnections, maxEvaluationBytes, maxIdleTimeMs, tls, transport, upstream, upstreamConnectTimeoutMs, "
        "upstreamTls]"]


def test_a_port_in_use_is_reported_plainly(tmp_path):
    taken = backend_process(tmp_path, name="holder").start()
    try:
        r = run("backend", "--port", str(taken.port))
        assert r.returncode == 1
        assert f"cannot listen on 127.0.0.1:{taken.port}: Address already in use" in r.stderr
        cfg = tmp_path / "p.yaml"
        cfg.write_text(f"listen: 127.0.0.1:{taken.port}\nupstream: 127.0.0.1:{free_port()}\n")
        r = run("proxy", "--config", str(cfg))
        assert r.returncode == 1
        assert f"cannot listen on 127.0.0.1:{taken.port}: Address already in use" in r.stderr
    finally:
        taken.stop()
