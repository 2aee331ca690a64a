"""TLS for SSL and SASL_SSL listeners: a server `ssl.SSLContext` from Kafka's `ssl.*` configs.

No sockets here: the listener wraps its connections with the context. The principal of the peer's
certificate is tls_principal.py's.

Configs are read as Kafka's DefaultSslEngineFactory reads them (createKeystore, createTruststore,
PemStore; PEM stores are KIP-651), with the same refusals and messages. The `ssl` module loads
PEM only, so every store goes through `cryptography` first: PKCS12 files are decoded, encrypted
keys decrypted, and the key reaches OpenSSL through a private temporary file, deleted as soon as
it is loaded, in which it is encrypted again under a one-time password.

Where Kafka defers to the JVM, we do as a current JDK does: a `JKS`-typed store that is really a
PKCS12 file loads (`keystore.type.compat`), TLSv1 and TLSv1.1 are disabled, and with no trust
store a client certificate is checked against the system's CAs (Java's `cacerts`).

Over 500 lines for a reason: the key store and the trust store each refuse their own combinations of
configs in Kafka's order and words (createKeystore, createTruststore), and Java's cipher-suite names need
their table; all of it builds the one context.
"""

from __future__ import annotations

import base64
import binascii
import re
import secrets
import ssl
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import dsa, ec, rsa
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    PrivateFormat,
    load_der_private_key,
    pkcs12,
)

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | dsa.DSAPrivateKey

DEFAULT_STORE_TYPE: Final = "JKS"  # SslConfigs' default for ssl.keystore.type and ssl.truststore.type
PEM_TYPE: Final = "PEM"  # compared case-sensitively, as DefaultSslEngineFactory does

# ssl.client.auth: ConfigDef.ValidString.in(required, requested, none), case-sensitive
CLIENT_AUTH: Final[Mapping[str, ssl.VerifyMode]] = {
    "required": ssl.CERT_REQUIRED,
    "requested": ssl.CERT_OPTIONAL,
    "none": ssl.CERT_NONE,
}

DEFAULT_ENABLED_PROTOCOLS: Final = ("TLSv1.2", "TLSv1.3")  # SslConfigs.DEFAULT_SSL_ENABLED_PROTOCOLS
_PROTOCOLS: Final = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
# names the JDK knows but disables (jdk.tls.disabledAlgorithms); SSLv2Hello is a pseudo-protocol
_JDK_DISABLED_PROTOCOLS: Final = frozenset({"SSLv2Hello", "SSLv3", "TLSv1", "TLSv1.1"})

# ssl.cipher.suites holds Java's (IANA) names; OpenSSL has its own for TLS 1.2 suites. These are the
# suites the JDK enables by default, which are the ones a Kafka configuration lists in practice.
_TLS12_CIPHER_SUITES: Final = {
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384": "DHE-RSA-AES256-GCM-SHA384",
    "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256": "DHE-RSA-AES128-GCM-SHA256",
    "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "DHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384": "ECDHE-ECDSA-AES256-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384": "ECDHE-RSA-AES256-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256": "DHE-RSA-AES256-SHA256",
    "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256": "DHE-RSA-AES128-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_CBC_SHA256": "AES256-SHA256",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
}
_TLS13_CIPHER_SUITES: Final = frozenset(
    {"TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256"}
)
_SIGNALLING_SUITES: Final = frozenset({"TLS_EMPTY_RENEGOTIATION_INFO_SCSV"})  # not a cipher; nothing to enable

_JKS_MAGIC: Final = b"\xfe\xed\xfe\xed"
_JCEKS_MAGIC: Final = b"\xce\xce\xce\xce"


class TlsConfigError(ValueError):
    """An `ssl.*` config Kafka refuses; `config` names it, the message says why (Kafka's text where it has one)."""

    def __init__(self, config: str, message: str) -> None:
        super().__init__(message)
        self.config = config


# --- the server context -------------------------------------------------------------------------------------------


def server_ssl_context(configs: Mapping[str, Any]) -> ssl.SSLContext:
    """A server-side context for one listener from Kafka's `ssl.*` configs (names without `listener.name.x.`).

    A missing, None or empty value means the config is not set. Raises TlsConfigError.
    """
    verify_mode = client_auth_mode(configs)
    keystore = _load_keystore(configs)
    if keystore is None:
        raise TlsConfigError(
            "ssl.keystore.location",
            "SSL key store is not specified: an SSL listener needs ssl.keystore.location, or "
            "ssl.keystore.certificate.chain and ssl.keystore.key",
        )
    trusted = _load_truststore(configs)

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _apply_protocols_and_cipher_suites(context, configs)
    _install_keystore(context, *keystore)
    if trusted is not None:
        context.load_verify_locations(cadata="".join(_certificate_pem(c) for c in trusted))
    elif verify_mode != ssl.CERT_NONE:
        context.load_default_certs(ssl.Purpose.CLIENT_AUTH)
    context.verify_mode = verify_mode
    return context


def client_auth_mode(configs: Mapping[str, Any]) -> ssl.VerifyMode:
    """`ssl.client.auth` (none, requested, required) as the `ssl` module's verify mode."""
    value = _setting(configs, "ssl.client.auth") or "none"
    if value not in CLIENT_AUTH:
        raise TlsConfigError(
            "ssl.client.auth",
            f"Invalid value {value} for configuration ssl.client.auth: String must be one of: {', '.join(CLIENT_AUTH)}",
        )
    return CLIENT_AUTH[value]


def _setting(configs: Mapping[str, Any], name: str) -> str | None:
    value = configs.get(name)
    if value is None:
        return None
    text = str(value)
    return text if text != "" else None


def _list_setting(configs: Mapping[str, Any], name: str) -> list[str] | None:
    """A LIST config as ConfigDef parses it: comma-separated, trimmed; unset or empty gives None."""
    value = configs.get(name)
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else [str(item) for item in value]
    names = [item.strip() for item in items if item.strip()]
    return names or None


def _apply_protocols_and_cipher_suites(context: ssl.SSLContext, configs: Mapping[str, Any]) -> None:
    raw_protocols = _list_setting(configs, "ssl.enabled.protocols")
    protocols = raw_protocols if raw_protocols is not None else list(DEFAULT_ENABLED_PROTOCOLS)
    enabled: set[ssl.TLSVersion] = set()
    for name in protocols:
        if name in _PROTOCOLS:
            enabled.add(_PROTOCOLS[name])
        elif name not in _JDK_DISABLED_PROTOCOLS:
            raise TlsConfigError(
                "ssl.enabled.protocols",
                f"Invalid value {','.join(protocols)} for configuration ssl.enabled.protocols: "
                f"Unsupported protocol: {name} (supported: {', '.join(_PROTOCOLS)})",
            )

    suites = _list_setting(configs, "ssl.cipher.suites")
    if suites is not None:
        tls12, tls13 = [], []
        for name in suites:
            if name in _TLS12_CIPHER_SUITES:
                tls12.append(_TLS12_CIPHER_SUITES[name])
            elif name in _TLS13_CIPHER_SUITES:
                tls13.append(name)
            elif name not in _SIGNALLING_SUITES:
                raise TlsConfigError(
                    "ssl.cipher.suites",
                    f"Invalid value {','.join(suites)} for configuration ssl.cipher.suites: Unsupported CipherSuite: "
                    f"{name} (give Java's names, e.g. TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384)",
                )
        # A protocol version left without a suite cannot be negotiated, as in Java. Python's ssl cannot
        # narrow TLS 1.3's suites, so naming any of them keeps all of them.
        if tls12:
            try:
                context.set_ciphers(":".join(tls12))
            except ssl.SSLError as e:
                raise TlsConfigError("ssl.cipher.suites", f"No cipher suite of ssl.cipher.suites is usable: {e}") from e
        else:
            enabled.discard(ssl.TLSVersion.TLSv1_2)
        if not tls13:
            enabled.discard(ssl.TLSVersion.TLSv1_3)

    if not enabled:
        raise TlsConfigError(
            "ssl.enabled.protocols",
            f"No protocol can be negotiated with ssl.enabled.protocols={','.join(protocols)}"
            + (f" and ssl.cipher.suites={','.join(suites)}" if suites is not None else "")
            + ": TLSv1.2 or TLSv1.3 is needed (TLSv1 and TLSv1.1 are disabled, as in the JDK)",
        )
    context.minimum_version = min(enabled)
    context.maximum_version = max(enabled)


def _install_keystore(context: ssl.SSLContext, key: PrivateKey, chain: Sequence[x509.Certificate]) -> None:
    # load_cert_chain reads files only. The key goes to disk encrypted under a password that lives
    # only in this call, in a file only we can read (mkstemp's 0600), removed on leaving the block.
    one_time_password = secrets.token_urlsafe(32)
    key_pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(one_time_password.encode()))
    chain_pem = "".join(_certificate_pem(c) for c in chain).encode()
    with tempfile.NamedTemporaryFile(prefix="minibroker-keystore-", suffix=".pem") as file:
        file.write(chain_pem + key_pem)
        file.flush()
        context.load_cert_chain(file.name, password=one_time_password)


# --- the two stores -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _StoreConfigs:
    """`ssl.<name>.type`, `.location` and `.password` of the key store or the trust store, and how a file of either
    is read (DefaultSslEngineFactory reads both the same way; what each may hold differs)."""

    name: str  # "keystore" or "truststore", as in the config names
    store_type: str
    location: str | None
    password: str | None

    @classmethod
    def of(cls, configs: Mapping[str, Any], name: str) -> _StoreConfigs:
        return cls(
            name,
            _setting(configs, f"ssl.{name}.type") or DEFAULT_STORE_TYPE,
            _setting(configs, f"ssl.{name}.location"),
            _setting(configs, f"ssl.{name}.password"),
        )

    def read_pem_file(self, location: str) -> tuple[str, str]:
        """(text, message prefix) of a PEM store file (FileBasedPemStore)."""
        prefix = f"Failed to load PEM SSL {self.name} {location}"
        return _read_file(location, f"ssl.{self.name}.location", prefix).decode("utf-8", "replace"), prefix

    def load_pkcs12(self, location: str) -> tuple[pkcs12.PKCS12KeyAndCertificates, str]:
        """(contents, message prefix) of a binary store file, which must be PKCS12 (FileBasedStore.load)."""
        prefix = f"Failed to load SSL {self.name} {location} of type {self.store_type}"
        data = _read_file(location, f"ssl.{self.name}.location", prefix)
        _check_binary_store(data, self.store_type, prefix, f"ssl.{self.name}")
        return _load_pkcs12(data, self.password, prefix, f"ssl.{self.name}.password"), prefix


# --- key store ----------------------------------------------------------------------------------------------------


def _load_keystore(configs: Mapping[str, Any]) -> tuple[PrivateKey, list[x509.Certificate]] | None:
    """The key and its certificate chain, following DefaultSslEngineFactory.createKeystore; None if none is set."""
    store = _StoreConfigs.of(configs, "keystore")
    store_type, location, password = store.store_type, store.location, store.password
    key_password = _setting(configs, "ssl.key.password")
    key_pem = _setting(configs, "ssl.keystore.key")
    chain_pem = _setting(configs, "ssl.keystore.certificate.chain")

    if key_pem is not None:
        if store_type != PEM_TYPE:
            raise TlsConfigError(
                "ssl.keystore.key",
                f"SSL private key can be specified only for PEM, but key store type is {store_type}. "
                "Set ssl.keystore.type=PEM.",
            )
        if chain_pem is None:
            raise TlsConfigError(
                "ssl.keystore.certificate.chain",
                "SSL private key is specified, but certificate chain is not specified "
                "(ssl.keystore.certificate.chain).",
            )
        if location is not None:
            raise TlsConfigError(
                "ssl.keystore.location",
                "Both SSL key store location and separate private key are specified "
                "(ssl.keystore.location and ssl.keystore.key).",
            )
        if password is not None:
            raise _pem_store_password_error()
        return _pem_keystore(chain_pem, key_pem, key_password, "Invalid PEM keystore configs", "ssl.keystore.key")
    if chain_pem is not None:
        raise TlsConfigError(
            "ssl.keystore.key",
            "SSL certificate chain is specified, but private key is not specified (ssl.keystore.key).",
        )
    if store_type == PEM_TYPE and location is not None:
        if password is not None:
            raise _pem_store_password_error()
        text, prefix = store.read_pem_file(location)
        return _pem_keystore(text, text, key_password, prefix, "ssl.keystore.location")
    if location is None and password is not None:
        raise TlsConfigError(
            "ssl.keystore.password",
            "SSL key store is not specified, but key store password is specified (ssl.keystore.location).",
        )
    if location is not None and password is None:
        raise TlsConfigError(
            "ssl.keystore.password",
            "SSL key store is specified, but key store password is not specified (ssl.keystore.password).",
        )
    if location is None or password is None:
        return None

    # One password decrypts a PKCS12 file here; keytool and openssl write PKCS12 keys under the store
    # password, which is why Kafka's ssl.key.password only matters for PEM in practice.
    contents, prefix = store.load_pkcs12(location)
    if contents.key is None or contents.cert is None:
        raise TlsConfigError("ssl.keystore.location", f"{prefix}: the key store holds no private key entry")
    key = _check_key_type(contents.key, prefix, "ssl.keystore.location")
    return key, [contents.cert.certificate, *(c.certificate for c in contents.additional_certs)]


def _pem_store_password_error() -> TlsConfigError:
    return TlsConfigError(
        "ssl.keystore.password",
        "SSL key store password cannot be specified with PEM format, only key password may be specified "
        "(ssl.key.password).",
    )


def _pem_keystore(
    chain_text: str, key_text: str, key_password: str | None, prefix: str, config: str
) -> tuple[PrivateKey, list[x509.Certificate]]:
    """PemStore: every CERTIFICATE block is the chain (leaf first), one PKCS#8 key, encrypted iff ssl.key.password."""
    chain = _pem_certificates(chain_text, prefix, config)
    key_blocks = [(label, der) for label, der in _pem_blocks(key_text, prefix, config) if label.endswith("PRIVATE KEY")]
    if not key_blocks:
        raise TlsConfigError(config, f"{prefix}: No matching PRIVATE KEY entries in PEM file")
    if len(key_blocks) != 1:
        raise TlsConfigError(config, f"{prefix}: Expected one private key, but found {len(key_blocks)}")
    label, der = key_blocks[0]
    if label not in ("PRIVATE KEY", "ENCRYPTED PRIVATE KEY"):
        # Kafka decodes the key as PKCS#8 (PKCS8EncodedKeySpec / EncryptedPrivateKeyInfo) and fails otherwise
        raise TlsConfigError(
            config,
            f"{prefix}: the key is a '{label}' block; Kafka reads PKCS#8 keys only (BEGIN PRIVATE KEY, or "
            "BEGIN ENCRYPTED PRIVATE KEY with ssl.key.password): convert it with `openssl pkcs8 -topk8`",
        )
    if label == "ENCRYPTED PRIVATE KEY" and key_password is None:
        raise TlsConfigError(
            "ssl.key.password", f"{prefix}: the private key is encrypted, but ssl.key.password is not set"
        )
    if label == "PRIVATE KEY" and key_password is not None:
        raise TlsConfigError(
            "ssl.key.password", f"{prefix}: ssl.key.password is set, but the private key is not encrypted"
        )
    try:
        loaded = load_der_private_key(der, key_password.encode() if key_password is not None else None)
    except (ValueError, TypeError) as e:
        if key_password is not None:
            raise TlsConfigError(
                "ssl.key.password", f"{prefix}: the private key could not be decrypted with ssl.key.password ({e})"
            ) from e
        raise TlsConfigError(config, f"{prefix}: Private key could not be loaded ({e})") from e
    key = _check_key_type(loaded, prefix, config)
    if key.public_key() != chain[0].public_key():
        raise TlsConfigError(
            config,
            f"{prefix}: the private key does not match the first certificate of the chain (the leaf comes first)",
        )
    return key, chain


def _check_key_type(key: object, prefix: str, config: str) -> PrivateKey:
    # PemStore's key factories are RSA, DSA and EC
    if not isinstance(key, rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | dsa.DSAPrivateKey):
        raise TlsConfigError(
            config, f"{prefix}: Private key could not be loaded ({type(key).__name__}: not RSA, EC or DSA)"
        )
    return key


# --- trust store --------------------------------------------------------------------------------------------------


def _load_truststore(configs: Mapping[str, Any]) -> list[x509.Certificate] | None:
    """Trusted certificates, following DefaultSslEngineFactory.createTruststore; None if no trust store is set."""
    store = _StoreConfigs.of(configs, "truststore")
    store_type, location, password = store.store_type, store.location, store.password
    certificates = _setting(configs, "ssl.truststore.certificates")

    if certificates is not None:
        if store_type != PEM_TYPE:
            raise TlsConfigError(
                "ssl.truststore.certificates",
                f"SSL trust store certs can be specified only for PEM, but trust store type is {store_type}. "
                "Set ssl.truststore.type=PEM.",
            )
        if location is not None:
            raise TlsConfigError(
                "ssl.truststore.location",
                "Both SSL trust store location and separate trust certificates are specified "
                "(ssl.truststore.location and ssl.truststore.certificates).",
            )
        if password is not None:
            raise _pem_truststore_password_error()
        return _pem_certificates(certificates, "Invalid PEM truststore configs", "ssl.truststore.certificates")
    if store_type == PEM_TYPE and location is not None:
        if password is not None:
            raise _pem_truststore_password_error()
        text, prefix = store.read_pem_file(location)
        return _pem_certificates(text, prefix, "ssl.truststore.location")
    if location is None and password is not None:
        raise TlsConfigError(
            "ssl.truststore.password",
            "SSL trust store is not specified, but trust store password is specified (ssl.truststore.location).",
        )
    if location is None:
        return None

    contents, prefix = store.load_pkcs12(location)
    trusted = ([contents.cert.certificate] if contents.cert is not None else []) + [
        c.certificate for c in contents.additional_certs
    ]
    if not trusted:
        raise TlsConfigError("ssl.truststore.location", f"{prefix}: the trust store holds no certificate")
    return trusted


def _pem_truststore_password_error() -> TlsConfigError:
    return TlsConfigError("ssl.truststore.password", "SSL trust store password cannot be specified for PEM format.")


# --- files and encodings ------------------------------------------------------------------------------------------


def _read_file(path: str, config: str, prefix: str) -> bytes:
    try:
        with open(path, "rb") as file:
            return file.read()
    except FileNotFoundError as e:
        raise TlsConfigError(config, f"{prefix}: no such file ({config}={path})") from e
    except OSError as e:
        raise TlsConfigError(config, f"{prefix}: {e.strerror or e} ({config}={path})") from e


def _check_binary_store(data: bytes, store_type: str, prefix: str, config_prefix: str) -> None:
    """Refuse what is not a PKCS12 file, saying what it is; PKCS12 content loads under type JKS too (as in the JDK)."""
    kind = store_type.upper()
    if kind == PEM_TYPE:  # Kafka compares with "PEM" exactly; in other spellings the JDK finds no such store type
        raise TlsConfigError(f"{config_prefix}.type", f"{prefix}: store type {store_type} is not known; write PEM")
    if kind not in ("PKCS12", "JKS"):
        raise TlsConfigError(
            f"{config_prefix}.type",
            f"{prefix}: store type {store_type} is not supported; use PKCS12 or PEM ({config_prefix}.type)",
        )
    if data.startswith(_JKS_MAGIC) or data.startswith(_JCEKS_MAGIC):
        store_format = "JKS" if data.startswith(_JKS_MAGIC) else "JCEKS"
        raise TlsConfigError(
            f"{config_prefix}.type",
            f"{prefix}: the file is a {store_format} key store; {store_format} is not supported, use PKCS12 or PEM "
            f"(convert it with `keytool -importkeystore -srcstoretype {store_format} -deststoretype PKCS12 ...` and "
            f"set {config_prefix}.type=PKCS12)",
        )
    if b"-----BEGIN " in data[:4096]:
        raise TlsConfigError(f"{config_prefix}.type", f"{prefix}: the file is PEM text; set {config_prefix}.type=PEM")


def _load_pkcs12(
    data: bytes, password: str | None, prefix: str, password_config: str
) -> pkcs12.PKCS12KeyAndCertificates:
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError as e:
        raise TlsConfigError(
            password_config, f"{prefix}: wrong password ({password_config}) or not a PKCS12 file ({e})"
        ) from e


_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.DOTALL)


def _pem_blocks(text: str, prefix: str, config: str) -> Iterator[tuple[str, bytes]]:
    """(label, DER) of each PEM block; text around blocks is allowed, as Kafka's PemParser allows it."""
    for match in _PEM_BLOCK.finditer(text):
        # RFC 1421 headers (Proc-Type, DEK-Info) precede the base64 body of a traditionally encrypted key
        body = "".join(line for line in match.group(2).splitlines() if ":" not in line)
        try:
            yield match.group(1), base64.b64decode("".join(body.split()), validate=True)
        except binascii.Error as e:
            raise TlsConfigError(config, f"{prefix}: bad base64 in a {match.group(1)} block ({e})") from e


def _pem_certificates(text: str, prefix: str, config: str) -> list[x509.Certificate]:
    ders = [der for label, der in _pem_blocks(text, prefix, config) if label == "CERTIFICATE"]
    if not ders:
        raise TlsConfigError(config, f"{prefix}: No matching CERTIFICATE entries in PEM file")
    certificates = []
    for der in ders:
        try:
            certificates.append(x509.load_der_x509_certificate(der))
        except ValueError as e:
            raise TlsConfigError(config, f"{prefix}: a CERTIFICATE block is not a valid certificate ({e})") from e
    return certificates


def _certificate_pem(certificate: x509.Certificate) -> str:
    return certificate.public_bytes(Encoding.PEM).decode()
