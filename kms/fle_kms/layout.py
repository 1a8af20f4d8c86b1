"""Where everything lives in a KMS directory (created by `kms init --dir D`; nothing in it is committed)."""
import json
from dataclasses import dataclass
from pathlib import Path

POLICY_NAME = "fle-shared"


@dataclass(frozen=True)
class KmsDir:
    root: Path

    @property
    def ca_cert(self): return self.root / "ca.pem"
    @property
    def ca_key(self): return self.root / "ca.key"
    @property
    def server_cert(self): return self.root / "server.pem"
    @property
    def server_key(self): return self.root / "server.key"
    @property
    def admin_cert(self): return self.root / "admin.pem"
    @property
    def admin_key(self): return self.root / "admin.key"
    @property
    def proxy_cert(self): return self.root / "proxy.pem"
    @property
    def proxy_key(self): return self.root / "proxy.key"
    @property
    def proxy_tls_cert(self): return self.root / "proxy-tls.pem"

    @property
    def proxy_tls_key(self): return self.root / "proxy-tls.key"

    @property
    def proxy_p12(self): return self.root / "proxy.p12"
    @property
    def proxy_p12_password(self): return self.root / "proxy.p12.password"
    @property
    def server_conf(self): return self.root / "server.conf"
    @property
    def policies(self): return self.root / "policies"
    @property
    def database(self): return self.root / "pykmip.db"
    @property
    def server_log(self): return self.root / "server.log"
    @property
    def settings_file(self): return self.root / "kms.json"
    @property
    def bootstrap_file(self): return self.root / "bootstrap.json"

    def initialized(self) -> bool:
        return self.settings_file.exists() and self.ca_cert.exists()

    def settings(self) -> dict:
        if not self.initialized():
            raise SystemExit(f"kms: {self.root} is not a KMS directory; run `kms init --dir {self.root}` first")
        return json.loads(self.settings_file.read_text())

    def save_settings(self, settings: dict) -> None:
        self.settings_file.write_text(json.dumps(settings, indent=2) + "\n")


def write_server_conf(d: KmsDir, host: str, port: int) -> None:
    """PyKMIP's server.conf: TLS 1.2 with client certificates, INFO logging (DEBUG would log key bytes)."""
    d.server_conf.write_text(f"""[server]
hostname={host}
port={port}
certificate_path={d.server_cert}
key_path={d.server_key}
ca_path={d.ca_cert}
auth_suite=TLS1.2
enable_tls_client_auth=True
tls_cipher_suites=TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384 TLS_RSA_WITH_AES_256_CBC_SHA256 TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256 TLS_RSA_WITH_AES_128_CBC_SHA256
policy_path={d.policies}
logging_level=INFO
database_path={d.database}
""")


def write_policy(d: KmsDir) -> None:
    """Keys live under the operation policy fle-shared: any client certificate of this CA may read
    them (the proxy's), only the creating certificate (the admin's) may change their state."""
    d.policies.mkdir(exist_ok=True)
    owner_only = ["ACTIVATE", "REVOKE", "DESTROY", "ADD_ATTRIBUTE", "MODIFY_ATTRIBUTE", "DELETE_ATTRIBUTE",
                  "REKEY", "ARCHIVE", "RECOVER"]
    preset = {op: "ALLOW_OWNER" for op in owner_only}
    preset.update({"GET": "ALLOW_ALL", "GET_ATTRIBUTES": "ALLOW_ALL", "GET_ATTRIBUTE_LIST": "ALLOW_ALL",
                   "LOCATE": "ALLOW_ALL", "CHECK": "ALLOW_ALL"})
    (d.policies / "fle.json").write_text(json.dumps({POLICY_NAME: {"preset": {"SYMMETRIC_KEY": preset}}}, indent=2))
