"""kms: init, proxy-tls, serve, bootstrap, list, create, activate, revoke, destroy (see docs/keys.md)."""
import argparse
import json
import os
import sys
import uuid
from pathlib import Path

from fle_kms import certs
from fle_kms.ciphers import CIPHERS, lengths_text
from fle_kms.layout import KmsDir, write_policy, write_server_conf

#: The source paper's keys, under their UUID names (docs/keys.md, "Keys over KMIP").
PAPER_KEYS = [
    ("89d6d529-a2fe-31dd-ae60-3cb35458dcc0", "AES", 256),
    ("da6fd698-4681-3bb5-88ad-d1d9d68b1df6", "ARIA", 256),
    ("93a7f87f-458c-31be-ad16-d5dfa2fc1bae", "3DES", 192),
]
#: More keys, with fresh UUIDs chosen at the first bootstrap and remembered in bootstrap.json.
EXTRA_KEYS = [("SEED-128", "SEED", 128), ("LEA-256", "LEA", 256), ("AES-128", "AES", 128), ("ARIA-128", "ARIA", 128)]


def cmd_init(a) -> int:
    d = KmsDir(Path(a.dir))
    if d.initialized() and not a.force:
        print(f"kms: {d.root} is already initialized (use --force to make new certificates)")
        return 0
    d.root.mkdir(parents=True, exist_ok=True)
    os.chmod(d.root, 0o700)
    ca_key, ca = certs.make_ca()
    certs.write_key(d.ca_key, ca_key)
    certs.write_cert(d.ca_cert, ca)
    names = ["localhost", "127.0.0.1", "kms"] + list(a.san or [])
    k, c = certs.issue(ca_key, ca, "kms", server_names=names)
    certs.write_key(d.server_key, k)
    certs.write_cert(d.server_cert, c)
    k, c = certs.issue(ca_key, ca, "fle-kms-admin", client=True)
    certs.write_key(d.admin_key, k)
    certs.write_cert(d.admin_cert, c)
    k, c = certs.issue(ca_key, ca, "fle-proxy", client=True)
    certs.write_key(d.proxy_key, k)
    certs.write_cert(d.proxy_cert, c)
    password = os.urandom(18).hex()
    certs.write_pkcs12(d.proxy_p12, "fle-proxy", k, c, ca, password.encode())
    fd = os.open(d.proxy_p12_password, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(password + "\n")
    settings = {"bind": a.bind, "host": "127.0.0.1" if a.bind in ("0.0.0.0", "::") else a.bind, "port": a.port}
    d.save_settings(settings)
    write_server_conf(d, a.bind, a.port)
    write_policy(d)
    print(f"kms: initialized {d.root}: CA, server certificate ({', '.join(names)}), client certificates "
          f"admin.pem (CN fle-kms-admin) and proxy.pem/proxy.p12 (CN fle-proxy); server on {a.bind}:{a.port}")
    return 0


def cmd_proxy_tls(a) -> int:
    """The proxy's listener certificate (serverAuth), issued by this KMS's CA, so one CA file serves
    clients of the proxy and the proxy's view of the KMS alike."""
    d = KmsDir(Path(a.dir))
    if not d.initialized():
        raise SystemExit(f"kms: {d.root} is not initialized (run `kms init` first)")
    if d.proxy_tls_cert.exists() and not a.force:
        print(f"kms: {d.proxy_tls_cert} exists (use --force to issue a new one)")
        return 0
    names = list(a.name or ["proxy", "localhost", "127.0.0.1"])
    ca_key, ca = certs.load_ca(d.ca_key, d.ca_cert)
    k, c = certs.issue(ca_key, ca, names[0], server_names=names)
    certs.write_key(d.proxy_tls_key, k)
    certs.write_cert(d.proxy_tls_cert, c)
    print(f"kms: issued {d.proxy_tls_cert} and {d.proxy_tls_key} for {', '.join(names)} (clients trust {d.ca_cert})")
    return 0


def cmd_serve(a) -> int:
    d = KmsDir(Path(a.dir))
    s = d.settings()
    if a.port is not None:
        s["port"] = a.port
        d.save_settings(s)
    write_server_conf(d, s["bind"], s["port"])
    server = Path(sys.executable).parent / "pykmip-server"
    print(f"kms: serving on {s['bind']}:{s['port']} (log: {d.server_log}); SIGTERM stops it", flush=True)
    # PyKMIP imports ciphers that cryptography has deprecated (TripleDES, Camellia, …) and warns at
    # every start; the versions are pinned, so the warnings say nothing new.
    env = dict(os.environ, PYTHONWARNINGS="ignore::UserWarning")
    # exec: SIGTERM and SIGINT reach pykmip-server itself, which shuts down cleanly.
    os.execve(str(server), [str(server), "-f", str(d.server_conf), "-l", str(d.server_log)], env)
    return 1


def _table(rows) -> str:
    lines = [f"{'UUID':36} | {'algorithm':9} | {'bits':4} | state"]
    lines.append("-" * 36 + "-+-" + "-" * 9 + "-+-" + "-" * 4 + "-+-" + "-" * 11)
    for r in rows:
        lines.append(f"{r.name:36} | {r.algorithm:9} | {r.bits:4} | {r.state}")
    return "\n".join(lines)


def _wait_for_policy(d, timeout=30.0) -> None:
    """pykmip-server loads operation policies a moment after it starts listening; until then every
    request on a key under fle-shared is denied. Wait for that (only a server whose log is here)."""
    import time
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not d.server_log.exists():
            return
        log = d.server_log.read_text(errors="replace")
        start = log.rfind("Starting up the operation policy file monitor")
        if start < 0 or log.find("Loading policy: fle-shared", start) >= 0:
            return
        time.sleep(0.2)
    raise SystemExit(f"kms: the server in {d.root} has not loaded its operation policy after {timeout:.0f} s "
                     f"(see {d.server_log})")


def _client(d):
    from fle_kms import admin
    _wait_for_policy(d)
    try:
        return admin.connect(d)
    except Exception as e:  # connection refused, TLS failure: one clear line
        s = d.settings()
        raise SystemExit(f"kms: cannot reach the KMS at {s['host']}:{s['port']}: {e} "
                         f"(is `kms serve --dir {d.root}` running?)")


def cmd_bootstrap(a) -> int:
    from fle_kms import admin
    d = KmsDir(Path(a.dir))
    chosen = json.loads(d.bootstrap_file.read_text()) if d.bootstrap_file.exists() else {}
    wanted = list(PAPER_KEYS)
    for label, alg, bits in EXTRA_KEYS:
        chosen.setdefault(label, str(uuid.uuid4()))
        wanted.append((chosen[label], alg, bits))
    d.bootstrap_file.write_text(json.dumps(chosen, indent=2) + "\n")
    client = _client(d)
    rows = []
    try:
        for name, alg, bits in wanted:
            uids = admin.locate(client, name)
            if not uids:
                _, uid = admin.create(client, alg, bits, name)
                uids = [uid]
            if len(uids) > 1:
                print(f"kms: warning: {len(uids)} keys are named {name}; the proxy will refuse it", file=sys.stderr)
            info = admin.describe(client, uids[0])
            if info.state == "PRE_ACTIVE":
                client.activate(uids[0])
                info = admin.describe(client, uids[0])
            rows.append(info)
    finally:
        client.close()
    print(_table(rows))
    return 0


def cmd_list(a) -> int:
    from fle_kms import admin
    d = KmsDir(Path(a.dir))
    client = _client(d)
    try:
        print(_table(admin.all_keys(client)))
    finally:
        client.close()
    return 0


def cmd_create(a) -> int:
    from fle_kms import admin
    d = KmsDir(Path(a.dir))
    client = _client(d)
    try:
        name, uid = admin.create(client, a.alg.upper(), a.bits, a.name)
        if a.activate:
            client.activate(uid)
        print(_table([admin.describe(client, uid)]))
    finally:
        client.close()
    return 0


def _state_change(a, action) -> int:
    from fle_kms import admin
    d = KmsDir(Path(a.dir))
    client = _client(d)
    try:
        uid = admin.resolve(client, a.uuid)
        info = admin.describe(client, uid)
        if action == "destroy" and info.state == "ACTIVE":
            raise SystemExit(f"kms: key {a.uuid} is Active; revoke it first (`kms revoke {a.uuid}`), then destroy")
        if action == "activate":
            client.activate(uid)
        elif action == "revoke":
            admin.revoke(client, uid)
        else:
            client.destroy(uid)
            print(f"kms: destroyed key {a.uuid} (KMS object {uid})")
            return 0
        print(_table([admin.describe(client, uid)]))
    except SystemExit:
        raise
    except Exception as e:
        raise SystemExit(f"kms: {action} {a.uuid} failed: {e}")
    finally:
        client.close()
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="kms", description="The mongo-fle-proxy KMS: PyKMIP over mutual TLS, and its keys.")
    sub = p.add_subparsers(dest="command", required=True)

    def with_dir(sp):
        sp.add_argument("--dir", default=os.environ.get("FLE_KMS_DIR", "build/kms"),
                        help="the KMS directory (certificates, server.conf, database); default $FLE_KMS_DIR or build/kms")
        return sp

    sp = with_dir(sub.add_parser("init", help="create the CA, certificates, server.conf and operation policy"))
    sp.add_argument("--bind", default="127.0.0.1", help="address the server listens on; default 127.0.0.1")
    sp.add_argument("--port", type=int, default=5696, help="port; default 5696")
    sp.add_argument("--san", action="append", help="another DNS name or IP for the server certificate (repeatable)")
    sp.add_argument("--force", action="store_true", help="replace existing certificates")
    sp.set_defaults(func=cmd_init)
    sp = with_dir(sub.add_parser("proxy-tls", help="issue the proxy's TLS certificate (proxy-tls.pem/.key) from the CA"))
    sp.add_argument("--name", action="append", help="a DNS name or IP it is for (repeatable); default proxy, localhost, "
                                                   "127.0.0.1")
    sp.add_argument("--force", action="store_true", help="replace an existing one")
    sp.set_defaults(func=cmd_proxy_tls)
    sp = with_dir(sub.add_parser("serve", help="run pykmip-server in the foreground (SIGTERM stops it)"))
    sp.add_argument("--port", type=int, help="listen on this port instead (remembered)")
    sp.set_defaults(func=cmd_serve)
    with_dir(sub.add_parser("bootstrap", help="create and activate the paper's keys and the extra ones (idempotent)")) \
        .set_defaults(func=cmd_bootstrap)
    with_dir(sub.add_parser("list", help="table of keys: UUID | algorithm | bits | state")).set_defaults(func=cmd_list)
    sp = with_dir(sub.add_parser("create", help="create a key named by a fresh UUID (Pre-Active unless --activate)"))
    sp.add_argument("--alg", required=True, help=", ".join(list(CIPHERS)[:-1]) + f" or {list(CIPHERS)[-1]}")
    sp.add_argument("--bits", type=int, required=True, help=f"key length: {lengths_text()}")
    sp.add_argument("--name", help="use this UUID instead of a fresh one")
    sp.add_argument("--activate", action="store_true", help="activate it right away")
    sp.set_defaults(func=cmd_create)
    for action, text in (("activate", "make a Pre-Active key Active"),
                         ("revoke", "deactivate a key: it still decrypts, no longer encrypts"),
                         ("destroy", "destroy a revoked key: nothing decrypts with it any more")):
        sp = with_dir(sub.add_parser(action, help=text))
        sp.add_argument("uuid", help="the key's UUID (its Name)")
        sp.set_defaults(func=lambda a, act=action: _state_change(a, act))
    a = p.parse_args(argv)
    return a.func(a)
