"""The committed v2 envelope vectors checked with pyca/cryptography, which shares no code with the proxy.

proxy/src/test/resources/vectors/envelope-v2.json holds envelopes in ciphertext format v2
(docs/envelope-format.md) made by the proxy's FieldCipher. Here they are recomputed from that page alone: header, context
C = UTF-8(namespace) 00 UTF-8(field) 00, AAD = header ‖ C, the v2 HKDF subkeys, GCM or CBC-PKCS#7 +
HMAC-SHA-256/128, and the deterministic nonce HMAC-SHA-256(detKey, AAD ‖ plaintext)[:n].

Suites cryptography offers: AES-GCM, AES-CBC-HMAC, 3DES-CBC-HMAC (TripleDES, from the "decrepit"
module in 50.x) and SEED-CBC-HMAC (also "decrepit"). ARIA and LEA are not offered, so their vectors
are skipped, saying so in the test id; EnvelopeV2VectorsTest (Bouncy Castle) covers them.
Nothing from the proxy is imported and nothing is started.
"""
import hashlib
import hmac
import json
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

VECTORS = Path(__file__).resolve().parents[1] / "src" / "test" / "resources" / "vectors" / "envelope-v2.json"

FORMAT_V2 = 0x82
DETERMINISTIC = 0x40
HEADER = 19
TAG = 16
MAC_INFO_V2 = b"mongo-fle-proxy/v2/mac"
DET_INFO_V2 = b"mongo-fle-proxy/v2/det"
MAC_INFO_V1 = b"mongo-fle-proxy/v1/mac"


def _decrepit(name):
    """A cipher cryptography moved to hazmat.decrepit (50.x); the old location as a fallback; else None."""
    try:
        from cryptography.hazmat.decrepit.ciphers import algorithms as decrepit
        return getattr(decrepit, name)
    except (ImportError, AttributeError):
        return getattr(algorithms, name, None)


def _cbc_works(algorithm, key_length):
    """True if this OpenSSL build can run the cipher in CBC mode (SEED may be left out of a build)."""
    if algorithm is None:
        return False
    try:
        alg = algorithm(bytes(key_length))
        enc = Cipher(alg, modes.CBC(bytes(alg.block_size // 8))).encryptor()
        enc.update(bytes(alg.block_size // 8))
        enc.finalize()
        return True
    except Exception:  # UnsupportedAlgorithm and friends
        return False


TRIPLE_DES = _decrepit("TripleDES")
SEED = _decrepit("SEED")

#: docs/envelope-format.md's suite table: name → (suite id, "gcm" or "cbc", cipher class or None, n, block size,
#: why it is skipped when the cipher is None)
SUITES = {
    "AES-GCM": (0x01, "gcm", algorithms.AES, 12, 16, None),
    "ARIA-GCM": (0x02, "gcm", None, 12, 16, "cryptography has no ARIA"),
    "LEA-GCM": (0x03, "gcm", None, 12, 16, "cryptography has no LEA"),
    "AES-CBC-HMAC": (0x11, "cbc", algorithms.AES, 16, 16, None),
    "ARIA-CBC-HMAC": (0x12, "cbc", None, 16, 16, "cryptography has no ARIA"),
    "SEED-CBC-HMAC": (0x14, "cbc", SEED if _cbc_works(SEED, 16) else None, 16, 16,
                      "this cryptography/OpenSSL offers no SEED-CBC"),
    "3DES-CBC-HMAC": (0x15, "cbc", TRIPLE_DES if _cbc_works(TRIPLE_DES, 24) else None, 8, 8,
                      "this cryptography offers no TripleDES"),
}


def load():
    with open(VECTORS, encoding="utf-8") as f:
        return json.load(f)["vectors"]


def params():
    out = []
    for v in load():
        variant = "det" if v["deterministic"] else "random"
        test_id = f"{v['id']}-{v['suite']}-{variant}-{len(v['keyHex']) * 4}"
        _, _, cipher, _, _, why = SUITES[v["suite"]]
        if cipher is None:
            out.append(pytest.param(v, id=f"{test_id}-SKIPPED-{why.replace(' ', '-')}",
                                    marks=pytest.mark.skip(reason=why)))
        else:
            out.append(pytest.param(v, id=test_id))
    return out


def hkdf(key, info):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"", info=info).derive(key)


def hmac_sha256(key, *parts):
    return hmac.new(key, b"".join(parts), hashlib.sha256).digest()


def context(namespace, field):
    return namespace.encode("utf-8") + b"\x00" + field.encode("utf-8") + b"\x00"


def header(v):
    suite_id = SUITES[v["suite"]][0]
    key_id = bytes.fromhex(v["keyId"].replace("-", ""))  # RFC 4122 order = the text form's order
    assert len(key_id) == 16
    return bytes([FORMAT_V2, suite_id | (DETERMINISTIC if v["deterministic"] else 0)]) + key_id + bytes([v["bsonType"]])


def cbc_encrypt(cipher, key, iv, plaintext):
    padder = padding.PKCS7(cipher.block_size).padder()
    padded = padder.update(plaintext) + padder.finalize()
    enc = Cipher(cipher(key), modes.CBC(iv)).encryptor()
    return enc.update(padded) + enc.finalize()


def cbc_decrypt(cipher, key, iv, ciphertext):
    dec = Cipher(cipher(key), modes.CBC(iv)).decryptor()
    padded = dec.update(ciphertext) + dec.finalize()
    unpadder = padding.PKCS7(cipher.block_size).unpadder()
    return unpadder.update(padded) + unpadder.finalize()


def seal(v, nonce, aad):
    """nonce ‖ ciphertext ‖ tag for this nonce and AAD, as §3.2 says."""
    _, kind, cipher, _, _, _ = SUITES[v["suite"]]
    key = bytes.fromhex(v["keyHex"])
    value = bytes.fromhex(v["valueHex"])
    if kind == "gcm":
        return nonce + AESGCM(key).encrypt(nonce, value, aad)
    ct = cbc_encrypt(cipher, key, nonce, value)
    return nonce + ct + hmac_sha256(hkdf(key, MAC_INFO_V2), aad, nonce, ct)[:TAG]


@pytest.mark.parametrize("v", params())
def test_vector(v):
    suite_id, kind, cipher, n, block, _ = SUITES[v["suite"]]
    key = bytes.fromhex(v["keyHex"])
    value = bytes.fromhex(v["valueHex"])
    env = bytes.fromhex(v["envelopeHex"])
    ctx = bytes.fromhex(v["contextHex"])

    assert ctx == context(v["namespace"], v["field"]), "contextHex is C for namespace and field"

    # Header: format 0x82, suite byte with the 0x40 flag, key id, BSON type.
    assert env[0] == FORMAT_V2
    assert env[1] == suite_id | (DETERMINISTIC if v["deterministic"] else 0)
    assert env[2:18] == bytes.fromhex(v["keyId"].replace("-", ""))
    assert env[18] == v["bsonType"]
    assert env[:HEADER] == header(v)

    body = len(value) if kind == "gcm" else (len(value) // block + 1) * block
    assert len(env) == HEADER + n + body + TAG

    aad = env[:HEADER] + ctx
    nonce = env[HEADER:HEADER + n]
    ct = env[HEADER + n:-TAG]
    tag = env[-TAG:]

    if kind == "gcm":
        assert AESGCM(key).decrypt(nonce, ct + tag, aad) == value
        with pytest.raises(InvalidTag):  # v1's AAD, the header alone: the context is authenticated
            AESGCM(key).decrypt(nonce, ct + tag, env[:HEADER])
        with pytest.raises(InvalidTag):
            AESGCM(key).decrypt(nonce, ct + tag, env[:HEADER] + context(v["namespace"] + "2", v["field"]))
    else:
        mac_key = hkdf(key, MAC_INFO_V2)
        assert hmac_sha256(mac_key, aad, nonce, ct)[:TAG] == tag, "HMAC-SHA-256/128 over AAD ‖ IV ‖ ciphertext"
        assert cbc_decrypt(cipher, key, nonce, ct) == value
        assert hmac_sha256(hkdf(key, MAC_INFO_V1), aad, nonce, ct)[:TAG] != tag, "not v1's macKey"
        assert hmac_sha256(mac_key, env[:HEADER], nonce, ct)[:TAG] != tag, "the context is in the tag"

    # Everything after the nonce recomputed (random entries: their nonce taken as given).
    fresh_aad = header(v) + context(v["namespace"], v["field"])
    assert header(v) + seal(v, nonce, fresh_aad) == env

    if v["deterministic"]:
        det_key = hkdf(key, DET_INFO_V2)
        assert nonce == hmac_sha256(det_key, aad, value)[:n], "nonce = HMAC-SHA-256(detKey, AAD ‖ plaintext)[:n]"
        fresh_nonce = hmac_sha256(det_key, fresh_aad, value)[:n]
        assert header(v) + seal(v, fresh_nonce, fresh_aad) == env, "the whole envelope, byte for byte"


def test_the_aes_vectors_are_there_and_not_skipped():
    vectors = load()
    aes = [v for v in vectors if v["suite"] in ("AES-GCM", "AES-CBC-HMAC")]
    kinds = {(v["suite"], v["deterministic"]) for v in aes}
    assert kinds == {("AES-GCM", False), ("AES-GCM", True), ("AES-CBC-HMAC", False), ("AES-CBC-HMAC", True)}
    assert {len(v["keyHex"]) // 2 for v in aes} == {16, 32}
    assert SUITES["AES-GCM"][2] is not None and SUITES["AES-CBC-HMAC"][2] is not None


def test_one_value_in_two_places_gives_two_deterministic_envelopes():
    det = [v for v in load() if v["deterministic"]]
    pairs = 0
    for i, a in enumerate(det):
        for b in det[i + 1:]:
            if (a["suite"], a["keyHex"], a["bsonType"], a["valueHex"]) == (b["suite"], b["keyHex"], b["bsonType"],
                                                                          b["valueHex"]):
                assert a["contextHex"] != b["contextHex"]
                assert a["envelopeHex"] != b["envelopeHex"]
                pairs += 1
    assert pairs >= 3
