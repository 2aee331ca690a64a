"""A throwaway PKI for tests: a CA, broker and client certificates, written as PEM and PKCS12 files.

Keys are EC P-256 by default (a key takes about a millisecond; the Java client, librdkafka,
kafka-python and aiokafka all accept ECDSA certificates); `key_type="rsa"` gives RSA 2048 for a
client that needs it. Certificates are valid for two days from an hour ago (clock skew), carry
the extensions OpenSSL's strict verification wants (key identifiers, critical basic constraints
and key usage) and, for a broker, subject alternative names for each host it is reached by.

Every path a client needs is on the returned objects, and `keystore_configs()` /
`truststore_configs()` give the broker's `ssl.*` configs in Kafka's names.
"""

from __future__ import annotations

import datetime
import ipaddress
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    NoEncryption,
    PrivateFormat,
    pkcs12,
)
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

KeyType = Literal["ec", "rsa"]
PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
KeystoreKind = Literal["PEM", "PKCS12", "inline"]

VALIDITY = datetime.timedelta(days=2)
CLOCK_SKEW = datetime.timedelta(hours=1)
DEFAULT_PASSWORD = "test-password"  # of the PKCS12 files; any value works, a fixed one is easier to debug


@dataclass(frozen=True)
class CertificateAuthority:
    """A self-signed CA; `ca_path` is what clients trust (`ssl.truststore.location` of type PEM, `ssl.ca.location`)."""

    directory: Path
    certificate: x509.Certificate
    key: PrivateKey
    ca_path: Path
    truststore_path: Path  # PKCS12 with Java's trusted-certificate attribute (ssl.truststore.type=PKCS12)
    truststore_password: str

    @property
    def ca_pem(self) -> str:
        return _cert_pem(self.certificate)

    def truststore_configs(self, kind: KeystoreKind = "PEM") -> dict[str, str]:
        """Kafka's `ssl.truststore.*` configs that trust this CA: a PEM file, a PKCS12 file or inline PEM."""
        if kind == "PEM":
            return {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(self.ca_path)}
        if kind == "PKCS12":
            return {
                "ssl.truststore.type": "PKCS12",
                "ssl.truststore.location": str(self.truststore_path),
                "ssl.truststore.password": self.truststore_password,
            }
        return {"ssl.truststore.type": "PEM", "ssl.truststore.certificates": self.ca_pem}


@dataclass(frozen=True)
class IssuedCertificate:
    """A certificate signed by the test CA with its key, as separate PEM files, one PEM keystore and PKCS12."""

    name: str
    certificate: x509.Certificate
    key: PrivateKey
    cert_path: Path  # the certificate (ssl.certificate.location, ssl_certfile)
    key_path: Path  # PKCS#8 key, encrypted with `key_password` when there is one (ssl.key.location, ssl_keyfile)
    keystore_path: Path  # key then certificate in one file: ssl.keystore.type=PEM with ssl.keystore.location
    key_password: str | None
    pkcs12_path: Path  # key and certificate, encrypted with `pkcs12_password`
    pkcs12_password: str

    @property
    def certificate_pem(self) -> str:
        return _cert_pem(self.certificate)

    @property
    def key_pem(self) -> str:
        return self.key_path.read_text()

    @property
    def der(self) -> bytes:
        return self.certificate.public_bytes(Encoding.DER)

    def keystore_configs(self, kind: KeystoreKind = "PEM") -> dict[str, str]:
        """Kafka's `ssl.keystore.*` configs for this certificate: a PEM file, a PKCS12 file or inline PEM (KIP-651)."""
        configs: dict[str, str]
        if kind == "PKCS12":
            return {
                "ssl.keystore.type": "PKCS12",
                "ssl.keystore.location": str(self.pkcs12_path),
                "ssl.keystore.password": self.pkcs12_password,
            }
        if kind == "PEM":
            configs = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(self.keystore_path)}
        else:
            configs = {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.certificate.chain": self.certificate_pem,
                "ssl.keystore.key": self.key_pem,
            }
        if self.key_password is not None:
            configs["ssl.key.password"] = self.key_password
        return configs


def make_ca(
    directory: str | Path | None = None, *, common_name: str = "minibroker test CA", key_type: KeyType = "ec"
) -> CertificateAuthority:
    """Create a CA and write `ca.pem` and `truststore.p12` into `directory` (a new temporary one by default)."""
    folder = Path(tempfile.mkdtemp(prefix="minibroker-pki-")) if directory is None else Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    key = _new_key(key_type)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = _now()
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(key_cert_sign=True), critical=True)
        .add_extension(ski, critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False)
        .sign(key, hashes.SHA256())
    )
    ca_path = folder / "ca.pem"
    ca_path.write_text(_cert_pem(certificate))
    truststore_path = folder / "truststore.p12"
    truststore_path.write_bytes(
        pkcs12.serialize_java_truststore(
            [pkcs12.PKCS12Certificate(certificate, b"ca")], BestAvailableEncryption(DEFAULT_PASSWORD.encode())
        )
    )
    return CertificateAuthority(folder, certificate, key, ca_path, truststore_path, DEFAULT_PASSWORD)


def make_broker_certificate(
    ca: CertificateAuthority,
    hosts: Iterable[str] = ("localhost", "127.0.0.1"),
    *,
    name: str = "broker",
    key_type: KeyType = "ec",
    key_password: str | None = None,
) -> IssuedCertificate:
    """Issue a server certificate for `hosts` (DNS names and IP addresses, as subject alternative names)."""
    host_list = list(hosts)
    if not host_list:
        raise ValueError("a broker certificate needs at least one host")
    alternative_names: list[x509.GeneralName] = []
    for host in host_list:
        try:
            alternative_names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            alternative_names.append(x509.DNSName(host))
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host_list[0])])
    return issue_certificate(
        ca,
        subject,
        name=name,
        alternative_names=alternative_names,
        usages=[ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH],
        key_type=key_type,
        key_password=key_password,
    )


def make_client_certificate(
    ca: CertificateAuthority,
    cn: str,
    *,
    subject: x509.Name | None = None,
    name: str | None = None,
    key_type: KeyType = "ec",
    key_password: str | None = None,
) -> IssuedCertificate:
    """Issue a client certificate with subject `CN=<cn>` (or `subject`), for mutual TLS."""
    return issue_certificate(
        ca,
        subject if subject is not None else x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]),
        name=name if name is not None else "client-" + (re.sub(r"[^A-Za-z0-9_.-]+", "_", cn) or "anonymous"),
        usages=[ExtendedKeyUsageOID.CLIENT_AUTH],
        key_type=key_type,
        key_password=key_password,
    )


def issue_certificate(
    ca: CertificateAuthority,
    subject: x509.Name,
    *,
    name: str,
    alternative_names: Iterable[x509.GeneralName] = (),
    usages: Iterable[x509.ObjectIdentifier] = (ExtendedKeyUsageOID.CLIENT_AUTH,),
    key_type: KeyType = "ec",
    key_password: str | None = None,
) -> IssuedCertificate:
    """Issue a leaf certificate for `subject` and write `<name>.pem`, `.key`, `-keystore.pem` and `.p12`."""
    key = _new_key(key_type)
    now = _now()
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(key_encipherment=key_type == "rsa"), critical=True)
        .add_extension(x509.ExtendedKeyUsage(list(usages)), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False)
    )
    names = list(alternative_names)
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    certificate = builder.sign(ca.key, hashes.SHA256())

    encryption = NoEncryption() if key_password is None else BestAvailableEncryption(key_password.encode())
    key_pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, encryption).decode()
    cert_pem = _cert_pem(certificate)
    folder = ca.directory
    cert_path, key_path = folder / f"{name}.pem", folder / f"{name}.key"
    keystore_path, pkcs12_path = folder / f"{name}-keystore.pem", folder / f"{name}.p12"
    cert_path.write_text(cert_pem)
    _write_private(key_path, key_pem.encode())
    _write_private(keystore_path, (key_pem + cert_pem).encode())
    _write_private(
        pkcs12_path,
        pkcs12.serialize_key_and_certificates(
            name.encode(), key, certificate, None, BestAvailableEncryption(DEFAULT_PASSWORD.encode())
        ),
    )
    return IssuedCertificate(
        name, certificate, key, cert_path, key_path, keystore_path, key_password, pkcs12_path, DEFAULT_PASSWORD
    )


def _new_key(key_type: KeyType) -> PrivateKey:
    if key_type == "rsa":
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ec.generate_private_key(ec.SECP256R1())


def _key_usage(*, key_cert_sign: bool = False, key_encipherment: bool = False) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=key_encipherment,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=key_cert_sign,
        crl_sign=key_cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def _cert_pem(certificate: x509.Certificate) -> str:
    return certificate.public_bytes(Encoding.PEM).decode()


def _write_private(path: Path, data: bytes) -> None:
    # keys are throwaway, but other users of the machine have no business reading them
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_bytes(data)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)
