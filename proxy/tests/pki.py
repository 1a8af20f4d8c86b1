"""Test certificates made with `cryptography`: a CA, server certificates for given names (also
expired ones), client certificates. Written as PEM files (PKCS#8 keys) for the proxy and clients."""
import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

NOW = datetime.datetime.now(datetime.timezone.utc)


def _name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


class Pki:
    def __init__(self, directory: Path, name="test CA"):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.cert = (x509.CertificateBuilder().subject_name(_name(name)).issuer_name(_name(name))
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(NOW - datetime.timedelta(days=1))
                     .not_valid_after(NOW + datetime.timedelta(days=30))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.ca_file = self.dir / f"{name.replace(' ', '-')}.pem"
        self.ca_file.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, file: str, cn: str, names=(), client=False, expired=False, uris=()):
        """Writes FILE.pem, FILE.key and FILE.both.pem (certificate + key, as pymongo and mongosh take them)."""
        key = ec.generate_private_key(ec.SECP256R1())
        start, end = ((NOW - datetime.timedelta(days=10), NOW - datetime.timedelta(days=3)) if expired
                      else (NOW - datetime.timedelta(days=1), NOW + datetime.timedelta(days=30)))
        b = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(self.cert.subject)
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(start).not_valid_after(end)
             .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
             .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH if client
                                                   else ExtendedKeyUsageOID.SERVER_AUTH]), critical=False))
        if names or uris:
            alt = [x509.UniformResourceIdentifier(u) for u in uris]
            for n in names:
                try:
                    alt.append(x509.IPAddress(ipaddress.ip_address(n)))
                except ValueError:
                    alt.append(x509.DNSName(n))
            b = b.add_extension(x509.SubjectAlternativeName(alt), critical=False)
        cert = b.sign(self.key, hashes.SHA256())
        cert_pem = cert.public_bytes(serialization.Encoding.PEM)
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        (self.dir / f"{file}.pem").write_bytes(cert_pem)
        (self.dir / f"{file}.key").write_bytes(key_pem)
        (self.dir / f"{file}.both.pem").write_bytes(cert_pem + key_pem)
        return cert, self.dir / f"{file}.pem", self.dir / f"{file}.key"
