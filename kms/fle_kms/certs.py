"""A private CA, the KMS's server certificate and the client certificates (admin, proxy)."""
import datetime
import ipaddress
import os
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=3650)


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "mongo-fle-proxy"),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _new_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _builder(subject, issuer, public_key, not_before):
    return (x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(issuer)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_before + VALIDITY))


def make_ca(cn="mongo-fle-proxy KMS CA"):
    key = _new_key()
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
    cert = (_builder(_name(cn), _name(cn), key.public_key(), now)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    return key, cert


def issue(ca_key, ca_cert, cn, *, server_names=None, client=False):
    """A leaf certificate: serverAuth with the given DNS names/IPs, or clientAuth (exactly one CN)."""
    key = _new_key()
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
    b = (_builder(_name(cn), ca_cert.subject, key.public_key(), now)
         .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
         .add_extension(x509.ExtendedKeyUsage(
             [ExtendedKeyUsageOID.CLIENT_AUTH] if client else [ExtendedKeyUsageOID.SERVER_AUTH]), critical=False))
    if server_names:
        alt = []
        for n in server_names:
            try:
                alt.append(x509.IPAddress(ipaddress.ip_address(n)))
            except ValueError:
                alt.append(x509.DNSName(n))
        b = b.add_extension(x509.SubjectAlternativeName(alt), critical=False)
    return key, b.sign(ca_key, hashes.SHA256())


def write_key(path: Path, key) -> None:
    """Unencrypted PKCS#8 PEM, readable by its owner only (Java reads it as is)."""
    data = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def write_cert(path: Path, cert) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def write_pkcs12(path: Path, name: str, key, cert, ca_cert, password: bytes) -> None:
    data = pkcs12.serialize_key_and_certificates(name.encode(), key, cert, [ca_cert],
                                                 serialization.BestAvailableEncryption(password))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def load_ca(key_path: Path, cert_path: Path):
    """The CA made by make_ca, read back from its files."""
    key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    return key, x509.load_pem_x509_certificate(cert_path.read_bytes())
