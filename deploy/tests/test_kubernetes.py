"""The Kubernetes manifests (deploy/kubernetes/), checked offline: every object validates, strictly
(no unknown field), against the Kubernetes schemas kubernetes-validate carries (the oldest
version we promise and the newest it has); and the objects agree with each other and with the
proxy's config — the Service and the PodDisruptionBudget select the Deployment's pods, the probes
ask the admin listener's /readyz and /healthz, the config is mounted as a directory (an edit
reaches the pods, and the proxy reloads it), each pod's audit trail goes to a directory named
after it, and the JVM's limits fit the config's budgets and the container's memory. The config's
policy itself starts a real proxy in test_kms_container.py."""
import re
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from test_compose import ROOT, resolved

MANIFESTS = ROOT / "deploy" / "kubernetes"
VERSIONS = ("1.29.0", kubernetes_validate.latest_version())
MIB = 1024 * 1024


def objects():
    out = {}
    for f in sorted(MANIFESTS.glob("*.yaml")):
        for doc in yaml.safe_load_all(f.read_text()):
            out[(doc["kind"], doc["metadata"]["name"])] = doc
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_every_manifest_validates_strictly(version):
    found = objects()
    assert {k for k, _ in found} == {"ConfigMap", "Deployment", "Service", "PodDisruptionBudget",
                                     "PersistentVolumeClaim"}
    for key, doc in found.items():
        kubernetes_validate.validate(doc, version, strict=True)


def test_the_validation_would_refuse_a_mistake():
    deployment = objects()[("Deployment", "fle-proxy")]
    typo = {**deployment, "spec": {**deployment["spec"], "replica": 3}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(typo, VERSIONS[-1], strict=True)


def mebibytes(quantity: str) -> int:
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi)", quantity)
    return int(int(m.group(1)) * units[m.group(2)])


def jvm_option(options: str, name: str) -> int:
    value = re.search(rf"{re.escape(name)}(\d+)([mg])", options)
    return int(value.group(1)) * (1024 if value.group(2) == "g" else 1)


def test_the_objects_agree_with_each_other_and_with_the_proxys_config():
    o = objects()
    deployment, service, pdb = o[("Deployment", "fle-proxy")], o[("Service", "fle-proxy")], \
        o[("PodDisruptionBudget", "fle-proxy")]
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert deployment["spec"]["replicas"] >= 2 and pdb["spec"]["maxUnavailable"] < deployment["spec"]["replicas"]
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0

    config_map = o[("ConfigMap", "fle-proxy-config")]
    config = yaml.safe_load(config_map["data"]["proxy.yaml"])
    [container] = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"mongodb": int(config["listen"].rsplit(":", 1)[1]), "admin": int(config["admin"].rsplit(":", 1)[1])}
    assert {p["name"]: p["targetPort"] for p in service["spec"]["ports"]} == {"mongodb": "mongodb", "admin": "admin"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "admin"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "admin"}, \
        "a KMS or upstream outage makes a proxy unready, never restarted"
    assert container["image"] == resolved("rs3")["services"]["proxy"]["image"], "the image the Compose stack builds"

    mounts = {m["name"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert volumes["config"]["configMap"]["name"] == "fle-proxy-config"
    assert container["args"] == ["proxy", "--config", mounts["config"]["mountPath"] + "/proxy.yaml"]
    assert "subPath" not in mounts["config"], "a file mounted by subPath never sees an edit of the ConfigMap"
    for name, path in (("tls", config["tls"]["cert"]), ("tls", config["tls"]["key"]), ("kmip", config["kmip"]["ca"]),
                       ("kmip", config["kmip"]["clientCert"]), ("kmip", config["kmip"]["clientKey"])):
        assert path.startswith(mounts[name]["mountPath"] + "/") and "secret" in volumes[name], path
    assert Path(config["audit"]["file"]).parent == Path(mounts["audit"]["mountPath"])
    assert mounts["audit"]["subPathExpr"] == "$(POD_NAME)", "each pod's trail in a directory of its own"
    env = {e["name"]: e for e in container["env"]}
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert "instance" not in config, "each pod named by its own host name, not one name for all"
    assert volumes["audit"]["persistentVolumeClaim"]["claimName"] == "fle-proxy-audit"
    assert o[("PersistentVolumeClaim", "fle-proxy-audit")]["spec"]["accessModes"] == ["ReadWriteMany"]

    # the heap holds the evaluation budget + 128 MiB; heap, direct memory and ~200 MiB of the JVM's
    # own (metaspace, code, threads) fit in the container's limit; the request covers the heap
    options = env["JAVA_TOOL_OPTIONS"]["value"]
    heap, direct = jvm_option(options, "-Xmx"), jvm_option(options, "-XX:MaxDirectMemorySize=")
    assert heap * MIB >= config["maxEvaluationBytes"] + 128 * MIB
    assert direct * MIB >= config["maxBufferedMessageBytes"]
    resources = container["resources"]
    assert heap + direct + 200 <= mebibytes(resources["limits"]["memory"])
    assert mebibytes(resources["requests"]["memory"]) >= heap
    assert "cpu" not in resources["limits"]

    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] and security["capabilities"]["drop"] == ["ALL"]
    assert pod["spec"]["securityContext"]["runAsNonRoot"] and mounts["tmp"]["mountPath"] == "/tmp"
