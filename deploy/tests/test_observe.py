"""The Compose `observe` profile and the proxy's health in the stacks, checked without a Docker
engine: Prometheus and Grafana pinned, on demand only, on the host's loopback, reading the files
under deploy/observe/; the proxy's healthcheck asks /readyz on its admin listener; every metric the
dashboard and the alert rules name is one the proxy exports (the list in docs/operations.md,
"Metrics"); and promtool (Debian's `prometheus`, which .ci/run installs) accepts the Prometheus
config and the rules, whose unit tests pass."""
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from test_compose import ROOT, STACKS, published_ports, resolved

OBSERVE = ROOT / "deploy" / "observe"
# What the proxy exports (metrics/ProxyMetrics, ProxyGauges, AdminServer) and the binders used here.
EXPORTED = {
    "fleproxy_connections_open", "fleproxy_connections_accepted_total", "fleproxy_connections_closed_total",
    "fleproxy_connections_refused_total", "fleproxy_requests_total", "fleproxy_requests_refused_total",
    "fleproxy_reply_errors_total", "fleproxy_bytes_total", "fleproxy_crypto_values_total",
    "fleproxy_crypto_seconds_total", "fleproxy_crypto_failures_total", "fleproxy_kms_requests_total",
    "fleproxy_kms_reachable", "fleproxy_key_cache_lookups_total", "fleproxy_keys_cached",
    "fleproxy_key_oldest_age_seconds", "fleproxy_keys_in_outage_window", "fleproxy_policy_reloads_total",
    "fleproxy_ready", "fleproxy_netty_direct_memory_used_bytes", "fleproxy_netty_direct_memory_max_bytes",
    "jvm_memory_used_bytes", "process_cpu_seconds_total", "up",
}
HISTOGRAMS = {"fleproxy_request_duration_seconds", "fleproxy_upstream_duration_seconds",
              "fleproxy_proxy_duration_seconds", "fleproxy_kms_request_duration_seconds"}
for h in HISTOGRAMS:
    EXPORTED |= {h + "_bucket", h + "_sum", h + "_count", h + "_max"}
FUNCTIONS = {"sum", "rate", "increase", "histogram_quantile", "max", "min", "by", "le", "avg", "count"}


def metric_names(expr):
    """The metric names a PromQL expression reads (identifiers that are not functions, labels or keywords)."""
    expr = re.sub(r'\{[^}]*\}', "", expr)        # label matchers
    expr = re.sub(r'\[[^\]]*\]', "", expr)       # ranges
    expr = re.sub(r'by\s*\([^)]*\)', "", expr)   # grouping labels
    return {w for w in re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", expr) if w not in FUNCTIONS}


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_the_observe_profile_is_pinned_on_demand_and_on_loopback(stack):
    services = resolved(stack)["services"]
    for name, port, image in (("prometheus", 9090, r"prom/prometheus:v2\.\d+\.\d+"),
                              ("grafana", 3000, r"grafana/grafana:\d+\.\d+\.\d+")):
        s = services[name]
        assert re.fullmatch(image, s["image"]), s["image"]
        assert s["profiles"] == ["observe"], "started only with --profile observe"
        assert published_ports(s) == [f"127.0.0.1:{port}:{port}/tcp"]
        assert s["healthcheck"]["test"][0] == "CMD"
    mounts = " ".join(services["prometheus"]["volumes"] if isinstance(services["prometheus"]["volumes"][0], str)
                      else [v["source"] + ":" + v["target"] for v in services["prometheus"]["volumes"]])
    assert "deploy/observe" in mounts
    # without the profile, nothing of it starts: no service outside it depends on it
    for name, s in services.items():
        if "observe" not in s.get("profiles", []):
            assert not set(s.get("depends_on", {})) & {"prometheus", "grafana"}, name


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_the_proxys_healthcheck_asks_readyz_on_the_admin_listener(stack):
    proxy = resolved(stack)["services"]["proxy"]
    test = " ".join(proxy["healthcheck"]["test"])
    assert "/readyz" in test and "9464" in test and "' 200 '" in test
    config = yaml.safe_load((ROOT / "deploy" / "proxy" / "proxy.yaml").read_text())
    assert config["admin"] == "0.0.0.0:9464"
    assert not any(":9464" in p for p in published_ports(proxy)), "the admin port is not published"
    scrape = yaml.safe_load((OBSERVE / "prometheus.yml").read_text())
    targets = [t for job in scrape["scrape_configs"] for c in job["static_configs"] for t in c["targets"]]
    assert targets == ["proxy:9464"]


def test_the_dashboard_and_the_alerts_use_only_exported_metrics():
    dashboard = json.loads((OBSERVE / "grafana" / "dashboards" / "fle-proxy.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    rules = yaml.safe_load((OBSERVE / "alerts.yml").read_text())
    exprs += [r["expr"] for g in rules["groups"] for r in g["rules"]]
    used = set().union(*map(metric_names, exprs))
    assert used and used <= EXPORTED, used - EXPORTED
    titles = " ".join(p["title"] for p in dashboard["panels"])
    for what in ("Requests", "Refusals", "p50 and p99", "KMS"):
        assert what in titles
    datasource = yaml.safe_load((OBSERVE / "grafana" / "provisioning" / "datasources" / "prometheus.yml").read_text())
    assert {p["datasource"]["uid"] for p in dashboard["panels"]} == {datasource["datasources"][0]["uid"]}
    metrics_doc = (ROOT / "docs" / "operations.md").read_text()
    for name in EXPORTED - {"up"} - {h + s for h in HISTOGRAMS for s in ("_bucket", "_sum", "_count", "_max")}:
        if name.startswith("fleproxy_"):
            assert name in metrics_doc or name.rsplit("_", 2)[0] + "_" in metrics_doc, \
                f"docs/operations.md does not explain {name}"


PROMTOOL = shutil.which("promtool")


@pytest.mark.skipif(PROMTOOL is None, reason="promtool (Debian package prometheus) is not installed")
@pytest.mark.parametrize("args", [["check", "config", "prometheus.yml"], ["check", "rules", "alerts.yml"],
                                  ["test", "rules", "alerts.test.yml"]], ids=" ".join)
def test_promtool_accepts_the_config_and_the_rules(args):
    r = subprocess.run([PROMTOOL, *args], cwd=OBSERVE, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
