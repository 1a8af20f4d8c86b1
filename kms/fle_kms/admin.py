"""The admin side: a PyKMIP client with the admin certificate, and the operations on keys."""
import os
import uuid
from dataclasses import dataclass

from kmip.core import enums
from kmip.core.factories import attributes as attribute_factory
from kmip.pie import objects
from kmip.pie.client import ProxyKmipClient

from fle_kms.ciphers import CIPHERS, name_of
from fle_kms.layout import POLICY_NAME, KmsDir

#: LEA has no KMIP algorithm value: its keys are registered as AES with this marking, which the
#: proxy's resolver treats as authoritative (see docs/keys.md, "Keys over KMIP").
MARKER_NAMESPACE = "mongo-fle-proxy"
LEA_MARKER = "cipher=LEA"

#: How each algorithm's keys are made (ciphers.CIPHERS): its KMIP algorithm, lengths, Create or Register.
ALGORITHMS = {name: (enums.CryptographicAlgorithm[kmip], set(lengths), how)
              for name, (kmip, lengths, how) in CIPHERS.items()}
USAGE = [enums.CryptographicUsageMask.ENCRYPT, enums.CryptographicUsageMask.DECRYPT]


@dataclass
class KeyInfo:
    name: str
    uid: str
    algorithm: str
    bits: int
    state: str


def connect(d: KmsDir, cert=None, key=None) -> ProxyKmipClient:
    s = d.settings()
    client = ProxyKmipClient(hostname=s["host"], port=s["port"], cert=str(cert or d.admin_cert),
                             key=str(key or d.admin_key), ca=str(d.ca_cert), ssl_version="PROTOCOL_SSLv23",
                             config_file=os.devnull, kmip_version=enums.KMIPVersion.KMIP_1_2)
    client.open()
    return client


def _name_attribute(name: str):
    return attribute_factory.AttributeFactory().create_attribute(enums.AttributeType.NAME, name)


def locate(client, name: str) -> list:
    return client.locate(attributes=[_name_attribute(name)])


def create(client, algorithm: str, bits: int, name: str = None) -> tuple:
    """Creates (or registers) a key named by a UUID; returns (name, uid). The key is Pre-Active."""
    if algorithm not in ALGORITHMS:
        raise SystemExit(f"kms: unknown algorithm {algorithm}; choose one of {', '.join(ALGORITHMS)}")
    kmip_alg, lengths, how = ALGORITHMS[algorithm]
    if bits not in lengths:
        raise SystemExit(f"kms: {algorithm} keys are {'/'.join(map(str, sorted(lengths)))} bits, not {bits}")
    name = name or str(uuid.uuid4())
    if how == "create":
        uid = client.create(kmip_alg, bits, operation_policy_name=POLICY_NAME, name=name,
                            cryptographic_usage_mask=USAGE)
    else:
        marking = [{"application_namespace": MARKER_NAMESPACE, "application_data": LEA_MARKER}] \
            if algorithm == "LEA" else None
        key = objects.SymmetricKey(kmip_alg, bits, os.urandom(bits // 8), masks=USAGE, name=name,
                                   app_specific_info=marking)
        key.operation_policy_name = POLICY_NAME
        uid = client.register(key)
    return name, uid


def describe(client, uid: str) -> KeyInfo:
    _, attrs = client.get_attributes(uid, ["Name", "Cryptographic Algorithm", "Cryptographic Length", "State",
                                           "Application Specific Information"])
    name, alg, bits, state, lea = "", "?", 0, "?", False
    for a in attrs:
        n = a.attribute_name.value
        v = a.attribute_value
        if n == "Name":
            name = v.name_value.value
        elif n == "Cryptographic Algorithm":
            alg = v.value.name
        elif n == "Cryptographic Length":
            bits = v.value
        elif n == "State":
            state = v.value.name
        elif n == "Application Specific Information":
            lea = v.application_namespace == MARKER_NAMESPACE and v.application_data == LEA_MARKER
    if lea:
        alg = "LEA"
    return KeyInfo(name, uid, name_of(alg), bits, state)


def all_keys(client) -> list:
    uids = client.locate(attributes=[attribute_factory.AttributeFactory().create_attribute(
        enums.AttributeType.OBJECT_TYPE, enums.ObjectType.SYMMETRIC_KEY)])
    return [describe(client, u) for u in sorted(uids, key=lambda u: int(u) if u.isdigit() else u)]


def resolve(client, name: str) -> str:
    """The unique identifier of the one key with this name (a UUID); SystemExit otherwise."""
    uids = locate(client, name)
    if not uids:
        raise SystemExit(f"kms: no key named {name}")
    if len(uids) > 1:
        raise SystemExit(f"kms: {len(uids)} keys are named {name} (objects {', '.join(uids)}); refusing to choose")
    return uids[0]


def revoke(client, uid: str) -> None:
    client.revoke(enums.RevocationReasonCode.CESSATION_OF_OPERATION, uid)
