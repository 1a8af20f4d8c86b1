"""Who may read what (docs/access.md): identities from client certificates and from SCRAM
conversations the server confirmed, and the per-field reveal / mask / deny, query and write rules,
through the real proxy. Certificates come from one test CA; the server that authenticates is
scram_server.py (SCRAM-SHA-256 with scramp) in front of the embedded backend."""
import pytest
from pymongo import ASCENDING
from pymongo.errors import OperationFailure

from conftest import EncryptingProxy, client
from pki import Pki
from scram_server import ScramServer

SSN = "123-45-6789"


@pytest.fixture(scope="module")
def pki(workdir):
    ca = Pki(workdir / "pki-identities", "identities CA")
    ca.issue("proxy", "proxy", names=["127.0.0.1", "localhost"])
    ca.issue("payments", "payments", client=True)
    ca.issue("support", "support-desk", client=True, uris=["spiffe://example.org/support"])
    return ca


def policy(kms, extra_fields=""):
    key = kms.keys["AES-256"]
    return (f"  acc.people:\n    key: {key}\n    fields:\n"
            f"      ssn: {{ reveal: [payments, batch], mask: partial, keep: 4, deny: [anonymous] }}\n"
            f"      card: {{ reveal: [payments], mask: pseudonym, query: [payments, support] }}\n"
            f"      salary: {{ reveal: [payments], mask: redact, write: [payments] }}\n" + extra_fields)


class IdentityProxy(EncryptingProxy):
    """An encrypting proxy with a TLS listener (client certificates optional) and identities."""

    def __init__(self, tmp, upstream_port, kms, collections, ca, name):
        self.ca = ca
        super().__init__(tmp, upstream_port, kms, collections, name=name, admin=True)

    def write(self, collections):
        super().write(collections)
        text = self.config.read_text()
        self.config.write_text(
            f"tls:\n  cert: {self.ca.dir}/proxy.pem\n  key: {self.ca.dir}/proxy.key\n"
            f"  clientCA: {self.ca.ca_file}\n  clientAuth: optional\n"
            "identities:\n"
            "  payments: { subject: \"CN=payments\" }\n"
            "  support: { uri: \"spiffe://example.org/support\" }\n"
            "  batch: { user: \"etl@admin\" }\n" + text)


def connect(proxy, ca, cert=None, **kw):
    extra = {"tlsCertificateKeyFile": str(ca.dir / f"{cert}.both.pem")} if cert else {}
    return client(proxy.uri(), tls=True, tlsCAFile=str(ca.ca_file), **extra, **kw)


@pytest.fixture(scope="module")
def scram_server(backend):
    s = ScramServer(backend.port, {("admin", "etl"): "etl-secret", ("admin", "app"): "app-secret"})
    yield s
    s.close()


@pytest.fixture(scope="module")
def proxy(workdir, scram_server, kms, pki):
    p = IdentityProxy(workdir, scram_server.port, kms, policy(kms), pki, name="proxy-identities").start()
    yield p
    p.stop()


def as_user(proxy, ca, user, password, **kw):
    return connect(proxy, ca, username=user, password=password, authSource="admin",
                   authMechanism="SCRAM-SHA-256", **kw)


@pytest.fixture(scope="module")
def people(proxy, pki):
    with as_user(proxy, pki, "etl", "etl-secret", tlsCertificateKeyFile=str(pki.dir / "payments.both.pem")) as c:
        c.acc.people.drop()
        c.acc.people.insert_many([{"_id": 1, "name": "ann", "ssn": SSN, "card": "4111-1111-1111-1111", "salary": 100},
                                  {"_id": 2, "name": "bob", "ssn": "987-65-4321", "card": "4111-1111-1111-1111",
                                   "salary": 200}])
    return proxy


def test_payments_sees_plaintext_support_the_masks(people, pki):
    with as_user(people, pki, "app", "app-secret", tlsCertificateKeyFile=str(pki.dir / "payments.both.pem")) as pay:
        docs = list(pay.acc.people.find({}, sort=[("_id", ASCENDING)]))
        assert docs[0]["ssn"] == SSN and docs[0]["salary"] == 100 and docs[0]["card"] == "4111-1111-1111-1111"
    with as_user(people, pki, "app", "app-secret", tlsCertificateKeyFile=str(pki.dir / "support.both.pem")) as sup:
        docs = list(sup.acc.people.find({}, sort=[("_id", ASCENDING)]))
        assert [d["ssn"] for d in docs] == ["***-**-6789", "***-**-4321"]
        assert docs[0]["salary"] is None and docs[0]["name"] == "ann"
        # the same card, the same pseudonym; nothing of the number in it
        assert docs[0]["card"] == docs[1]["card"] and docs[0]["card"].startswith("pn1:") and "4111" not in docs[0]["card"]


def test_anonymous_is_refused_the_denied_field_and_may_leave_it_out(people, pki):
    with as_user(people, pki, "app", "app-secret") as anon:
        with pytest.raises(OperationFailure) as e:
            list(anon.acc.people.find({}))
        assert e.value.code == 9720040 and "ssn" in str(e.value) and "anonymous" in str(e.value)
        assert SSN not in str(e.value.details)
        got = list(anon.acc.people.find({}, {"ssn": 0}, sort=[("_id", ASCENDING)]))
        assert got[0]["name"] == "ann" and "ssn" not in got[0] and got[0]["salary"] is None


def test_query_and_write_rules(people, pki):
    with as_user(people, pki, "app", "app-secret", tlsCertificateKeyFile=str(pki.dir / "support.both.pem")) as sup:
        with pytest.raises(OperationFailure) as e:
            list(sup.acc.people.find({"ssn": SSN}, {"ssn": 0}))  # would learn the plaintext by search
        assert e.value.code == 9720040 and "support" in str(e.value)
        with pytest.raises(OperationFailure) as e:
            list(sup.acc.people.find({}, {"ssn": 0}).sort("ssn", 1))
        assert e.value.code == 9720040
        # card may be queried by support (query: [payments, support]); its answer is still masked
        # (evaluated by the proxy, in batches of one: the second from the cursor it holds for support)
        got = list(sup.acc.people.find({"card": {"$regex": "^4111"}}, {"ssn": 0}).batch_size(1))
        assert len(got) == 2 and all(d["card"].startswith("pn1:") for d in got)
        assert all(d["salary"] is None for d in got)
        with pytest.raises(OperationFailure) as e:
            sup.acc.people.update_one({"_id": 1}, {"$set": {"salary": 1}})
        assert e.value.code == 9720040 and "salary" in str(e.value)
        sup.acc.people.update_one({"_id": 1}, {"$set": {"name": "ann2"}})  # other fields: as before


def test_identity_comes_from_a_confirmed_scram_conversation_only(people, pki):
    # etl@admin is the batch identity: reveals ssn, but salary (reveal: [payments]) stays redacted
    with as_user(people, pki, "etl", "etl-secret") as etl:
        d = etl.acc.people.find_one({"_id": 2})
        assert d["ssn"] == "987-65-4321" and d["salary"] is None
    # on one raw connection: a confirmed conversation makes it batch; a failed one after it (which
    # leaves the server's earlier authentication in force, as mongod does) leaves it no identity
    with raw_connection(people, pki) as s:
        assert authenticate(s, "etl", "etl-secret")["done"] is True
        assert command(s, {"find": "people", "filter": {"_id": 2}, "$db": "acc"})["cursor"]["firstBatch"][0]["ssn"] \
            == "987-65-4321"
        assert command(s, {"saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": b"n,,n=etl,r=claimed",
                           "$db": "admin"}).get("ok") == 1  # a claim, never confirmed: no identity from it
        failed = authenticate(s, "etl", "wrong")
        assert failed["ok"] == 0 and failed["code"] == 18
        denied = command(s, {"find": "people", "filter": {"_id": 2}, "$db": "acc"})
        assert denied["code"] == 9720040 and "anonymous" in denied["errmsg"]


def raw_connection(proxy, ca):
    import socket
    import ssl
    ctx = ssl.create_default_context(cafile=str(ca.ca_file))
    return ctx.wrap_socket(socket.create_connection(("127.0.0.1", proxy.port)), server_hostname="localhost")


def command(sock, body):
    import bson
    import wire
    command.request_id = getattr(command, "request_id", 100) + 1
    sock.sendall(wire.op_msg(body, request_id=command.request_id))
    _, payload = wire.read_reply(sock)
    return bson.decode(payload[5:])


def authenticate(sock, user, password):
    from bson.binary import Binary
    from scramp import ScramClient
    c = ScramClient(["SCRAM-SHA-256"], user, password)
    first = command(sock, {"saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": Binary(c.get_client_first().encode()),
                           "options": {"skipEmptyExchange": True}, "$db": "admin"})
    c.set_server_first(bytes(first["payload"]).decode())
    return command(sock, {"saslContinue": 1, "conversationId": first["conversationId"],
                          "payload": Binary(c.get_client_final().encode()), "$db": "admin"})


def test_x509_authentication_is_refused_with_a_clear_error(people, pki):
    c = connect(people, pki, "payments", authMechanism="MONGODB-X509", serverSelectionTimeoutMS=3000)
    with pytest.raises(OperationFailure) as e:
        c.admin.command("ping")
    assert e.value.code == 9720041 and "X509" in str(e.value)
    c.close()


def test_requests_and_fields_are_counted_by_identity(people, pki):
    import urllib.request
    with as_user(people, pki, "app", "app-secret", tlsCertificateKeyFile=str(pki.dir / "support.both.pem")) as sup:
        sup.acc.people.find_one({"_id": 1}, {"ssn": 0})
    text = urllib.request.urlopen(f"http://127.0.0.1:{people.admin_port}/metrics", timeout=10).read().decode()
    assert 'fleproxy_identity_requests_total{identity="support"}' in text
    assert 'fleproxy_identity_fields_total{identity="support",outcome="masked:partial"}' in text
    assert 'fleproxy_identity_fields_total{identity="payments",outcome="revealed"}' in text
