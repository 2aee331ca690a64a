"""TLS for SSL and SASL_SSL listeners: a server `ssl.SSLContext` from Kafka's `ssl.*` configs, and the
principal Kafka gives a client certificate.

No sockets here: the listener wraps its connections with the context, and hands the peer's
certificate (`SSLObject.getpeercert(binary_form=True)`) to `principal_from_certificate`.

Configs are read as Kafka's DefaultSslEngineFactory reads them (createKeystore, createTruststore,
PemStore; PEM stores are KIP-651), with the same refusals and messages. The `ssl` module loads
PEM only, so every store goes through `cryptography` first: PKCS12 files are decoded, encrypted
keys decrypted, and the key reaches OpenSSL through a private temporary file, deleted as soon as
it is loaded, in which it is encrypted again under a one-time password.

Where Kafka defers to the JVM, we do as a current JDK does: a `JKS`-typed store that is really a
PKCS12 file loads (`keystore.type.compat`), TLSv1 and TLSv1.1 are disabled, and with no trust
store a client certificate is checked against the system's CAs (Java's `cacerts`).
"""

from __future__ import annotations

import base64
import binascii
import functools
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

ANONYMOUS: Final = "User:ANONYMOUS"  # KafkaPrincipal.ANONYMOUS: a client that sent no certificate
DEFAULT_PRINCIPAL_MAPPING_RULES: Final = "DEFAULT"  # BrokerSecurityConfigs.DEFAULT_SSL_PRINCIPAL_MAPPING_RULES
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


class PrincipalMappingError(ValueError):
    """A client certificate's subject cannot be mapped through `ssl.principal.mapping.rules` (Kafka then fails the
    authentication and closes the connection)."""


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


# --- key store ----------------------------------------------------------------------------------------------------


def _load_keystore(configs: Mapping[str, Any]) -> tuple[PrivateKey, list[x509.Certificate]] | None:
    """The key and its certificate chain, following DefaultSslEngineFactory.createKeystore; None if none is set."""
    store_type = _setting(configs, "ssl.keystore.type") or DEFAULT_STORE_TYPE
    location = _setting(configs, "ssl.keystore.location")
    password = _setting(configs, "ssl.keystore.password")
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
        text = _read_file(location, "ssl.keystore.location", f"Failed to load PEM SSL keystore {location}").decode(
            "utf-8", "replace"
        )
        return _pem_keystore(
            text, text, key_password, f"Failed to load PEM SSL keystore {location}", "ssl.keystore.location"
        )
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

    prefix = f"Failed to load SSL keystore {location} of type {store_type}"
    data = _read_file(location, "ssl.keystore.location", prefix)
    _check_binary_store(data, store_type, prefix, "ssl.keystore")
    # One password decrypts a PKCS12 file here; keytool and openssl write PKCS12 keys under the store
    # password, which is why Kafka's ssl.key.password only matters for PEM in practice.
    store = _load_pkcs12(data, password, prefix, "ssl.keystore.password")
    if store.key is None or store.cert is None:
        raise TlsConfigError("ssl.keystore.location", f"{prefix}: the key store holds no private key entry")
    key = _check_key_type(store.key, prefix, "ssl.keystore.location")
    return key, [store.cert.certificate, *(c.certificate for c in store.additional_certs)]


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
    store_type = _setting(configs, "ssl.truststore.type") or DEFAULT_STORE_TYPE
    location = _setting(configs, "ssl.truststore.location")
    password = _setting(configs, "ssl.truststore.password")
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
        prefix = f"Failed to load PEM SSL truststore {location}"
        text = _read_file(location, "ssl.truststore.location", prefix).decode("utf-8", "replace")
        return _pem_certificates(text, prefix, "ssl.truststore.location")
    if location is None and password is not None:
        raise TlsConfigError(
            "ssl.truststore.password",
            "SSL trust store is not specified, but trust store password is specified (ssl.truststore.location).",
        )
    if location is None:
        return None

    prefix = f"Failed to load SSL truststore {location} of type {store_type}"
    data = _read_file(location, "ssl.truststore.location", prefix)
    _check_binary_store(data, store_type, prefix, "ssl.truststore")
    store = _load_pkcs12(data, password, prefix, "ssl.truststore.password")
    trusted = ([store.cert.certificate] if store.cert is not None else []) + [
        c.certificate for c in store.additional_certs
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


# --- the principal of a client certificate ------------------------------------------------------------------------


def principal_from_certificate(der_cert: bytes | None, rules: str | None = DEFAULT_PRINCIPAL_MAPPING_RULES) -> str:
    """Kafka's principal for an SSL client: `User:ANONYMOUS` without a certificate, else `User:` + the mapped subject.

    As DefaultKafkaPrincipalBuilder: the subject DN as Java renders it (`subject_dn`) through
    `ssl.principal.mapping.rules`. Raises TlsConfigError for bad rules, PrincipalMappingError when none applies.
    """
    if der_cert is None:
        return ANONYMOUS
    dn = subject_dn(der_cert)
    try:
        return "User:" + _principal_mapper(rules).get_name(dn)
    except NoMatchingRule as e:
        raise PrincipalMappingError(f"Failed to map name for '{dn}' based on SSL principal mapping rules. {e}") from e


@functools.lru_cache(maxsize=32)
def _principal_mapper(rules: str | None) -> SslPrincipalMapper:
    return SslPrincipalMapper(rules)


# X500Principal.getName() (RFC 2253): keywords only for these attribute types (AVAKeyword's
# rfc2253Compliant set); any other type, emailAddress included, is its dotted OID with the value in hex.
_RFC2253_KEYWORDS: Final = {
    "2.5.4.3": "CN",
    "2.5.4.6": "C",
    "2.5.4.7": "L",
    "2.5.4.8": "ST",
    "2.5.4.10": "O",
    "2.5.4.11": "OU",
    "2.5.4.9": "STREET",
    "0.9.2342.19200300.100.1.25": "DC",
    "0.9.2342.19200300.100.1.1": "UID",
}
# AVA.isDerString(value, false): PrintableString, T61String, IA5String, GeneralString, BMPString, UTF8String
_STRING_TAGS: Final = frozenset({0x13, 0x14, 0x16, 0x1B, 0x1E, 0x0C})
_ESCAPED: Final = frozenset(',=+<>#;"\\')  # AVA.toRFC2253String escapes these anywhere in a value


def subject_dn(der_cert: bytes) -> str:
    """A certificate's subject as Java's X500Principal.getName() gives it: RFC 2253, last RDN first."""
    try:
        rdns = []
        for _, _, set_start, set_end in _der_children(der_cert, *_subject_name_der(der_cert)):
            # a multi-valued RDN keeps its encoded order, joined with '+' (RDN.toRFC2253String)
            attributes = _der_children(der_cert, set_start, set_end)
            rdns.append("+".join(_rfc2253_attribute(der_cert, start, end) for _, _, start, end in attributes))
    except (IndexError, ValueError) as e:
        raise ValueError(f"not a DER X.509 certificate: {e}") from e
    return ",".join(reversed(rdns))


def _subject_name_der(der: bytes) -> tuple[int, int]:
    """Contents span of the subject Name inside Certificate.tbsCertificate."""
    _, _, cert_start, cert_end = _der_element(der, 0)
    _, _, tbs_start, tbs_end = _der_element(der, cert_start)
    fields = list(_der_children(der, tbs_start, tbs_end))
    first = 1 if fields[0][0] == 0xA0 else 0  # [0] EXPLICIT version, absent in v1 certificates
    # serialNumber, signature, issuer, validity, subject
    tag, _, start, end = fields[first + 4]
    if tag != 0x30:
        raise ValueError("subject is not a SEQUENCE")
    return start, end


def _rfc2253_attribute(der: bytes, start: int, end: int) -> str:
    """One AttributeTypeAndValue as AVA.toRFC2253String renders it."""
    children = list(_der_children(der, start, end))
    if len(children) != 2:
        raise ValueError("AttributeTypeAndValue is not a (type, value) pair")
    (oid_tag, _, oid_start, oid_end), (value_tag, value_offset, value_start, value_end) = children
    if oid_tag != 0x06:
        raise ValueError("attribute type is not an OBJECT IDENTIFIER")
    oid = _oid_text(der[oid_start:oid_end])
    keyword = _RFC2253_KEYWORDS.get(oid)
    if keyword is None or value_tag not in _STRING_TAGS:
        return f"{keyword or oid}=#{der[value_offset:value_end].hex()}"
    # Java decodes the bytes of every string type as UTF-8 (a BMPString too)
    text = der[value_start:value_end].decode("utf-8", "replace")
    escaped = "".join("\\" + c if c in _ESCAPED else "\\00" if c == "\x00" else c for c in text)
    # then each leading and trailing space or carriage return gets a backslash too
    lead = len(escaped) - len(escaped.lstrip(" \r"))
    trail = len(escaped.rstrip(" \r")) if lead < len(escaped) else len(escaped)
    return (
        f"{keyword}="
        + "".join("\\" + c for c in escaped[:lead])
        + escaped[lead:trail]
        + "".join("\\" + c for c in escaped[max(lead, trail) :])
    )


def _der_element(der: bytes, offset: int) -> tuple[int, int, int, int]:
    """(tag, offset, contents start, end) of the DER element at `offset`."""
    if offset + 2 > len(der):
        raise ValueError("truncated")
    tag, length = der[offset], der[offset + 1]
    if tag & 0x1F == 0x1F:
        raise ValueError("multi-byte tag")
    start = offset + 2
    if length & 0x80:
        size = length & 0x7F
        if size == 0 or size > 4:
            raise ValueError("unsupported length")
        length = int.from_bytes(der[start : start + size], "big")
        start += size
    end = start + length
    if end > len(der):
        raise ValueError("truncated")
    return tag, offset, start, end


def _der_children(der: bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    offset = start
    while offset < end:
        element = _der_element(der, offset)
        if element[3] > end:
            raise ValueError("element overruns its parent")
        yield element
        offset = element[3]


def _oid_text(body: bytes) -> str:
    arcs: list[int] = []
    value = 0
    for byte in body:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    if not arcs:
        raise ValueError("empty OBJECT IDENTIFIER")
    first = min(arcs[0] // 40, 2)
    return ".".join(str(arc) for arc in (first, arcs[0] - 40 * first, *arcs[1:]))


# --- ssl.principal.mapping.rules (SslPrincipalMapper) -------------------------------------------------------------

# The rule grammar of SslPrincipalMapper: DEFAULT, or RULE:pattern/replacement/ with an optional L or U,
# `\` escaping a `/` or `\` inside pattern and replacement. Rules are separated by commas; the splitter
# and the parser are the same expressions Kafka uses, so odd inputs split as they do in Kafka.
_RULE: Final = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_RULE_SPLITTER: Final = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)", re.ASCII)
_RULE_PARSER: Final = re.compile(_RULE, re.ASCII)
# Java spells named groups (?<name>...) and back references \k<name>; Python wants (?P<name>...), (?P=name)
_JAVA_NAMED_GROUP: Final = re.compile(r"(?<!\\)((?:\\\\)*)\(\?<([A-Za-z][A-Za-z0-9]*)>")
_JAVA_NAMED_REFERENCE: Final = re.compile(r"(?<!\\)((?:\\\\)*)\\k<([A-Za-z][A-Za-z0-9]*)>")
_JAVA_TRIM: Final = "".join(chr(c) for c in range(0x21))  # String.trim() drops every char <= ' '


class NoMatchingRule(LookupError):
    """No rule of an SslPrincipalMapper gives a name for a distinguished name."""


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    java_pattern: str = ""
    replacement: str = ""
    to_lower_case: bool = False
    to_upper_case: bool = False

    def apply(self, distinguished_name: str) -> str | None:
        if self.pattern is None:
            return distinguished_name
        if self.pattern.fullmatch(distinguished_name) is None:
            return None
        groups = self.pattern.groups
        result = self.pattern.sub(lambda m: _java_replacement(m, self.replacement, groups), distinguished_name)
        if self.to_lower_case:
            return result.lower()
        if self.to_upper_case:
            return result.upper()
        return result

    def __str__(self) -> str:
        if self.pattern is None:
            return "DEFAULT"
        flag = "/L" if self.to_lower_case else "/U" if self.to_upper_case else ""
        return f"RULE:{self.java_pattern}/{self.replacement}{flag}"


class SslPrincipalMapper:
    """`ssl.principal.mapping.rules`: the first rule that matches a DN gives the name (TlsConfigError if invalid)."""

    def __init__(self, rules: str | None = DEFAULT_PRINCIPAL_MAPPING_RULES) -> None:
        text = (rules if rules is not None else DEFAULT_PRINCIPAL_MAPPING_RULES).strip(_JAVA_TRIM)
        self.rules = [rule for rule in map(_parse_rule, _split_rules(text)) if rule is not None]

    def get_name(self, distinguished_name: str) -> str:
        """The short name for a DN (RFC 2253, as `subject_dn` renders it); raises NoMatchingRule."""
        for rule in self.rules:
            name = rule.apply(distinguished_name)
            if name is not None:
                return name
        raise NoMatchingRule(f"No rules apply to {distinguished_name}, rules [{', '.join(map(str, self.rules))}]")

    def __str__(self) -> str:
        return f"SslPrincipalMapper(rules = [{', '.join(map(str, self.rules))}])"


def _split_rules(text: str) -> list[str]:
    rules: list[str] = []
    position = 0
    # Matcher.find(): after an empty match the next search starts one character further on
    while position <= len(text):
        match = _RULE_SPLITTER.search(text, position)
        if match is None:
            break
        rules.append(match.group(1))
        position = match.end() + (1 if match.end() == match.start() else 0)
    return rules


def _parse_rule(rule: str) -> _Rule | None:
    match = _RULE_PARSER.match(rule)  # lookingAt()
    if match is None:
        raise TlsConfigError("ssl.principal.mapping.rules", f"Invalid rule: {rule}")
    if match.end() != len(rule):
        raise TlsConfigError(
            "ssl.principal.mapping.rules",
            f"Invalid rule: `{rule}`, unmatched substring: `{rule[match.end() :]}`",
        )
    if match.group(1) is not None:
        return _Rule(None)
    if match.group(2) is None:
        return None  # an empty rule is ignored
    java_pattern = match.group(2)
    python_pattern = _JAVA_NAMED_REFERENCE.sub(r"\1(?P=\2)", _JAVA_NAMED_GROUP.sub(r"\1(?P<\2>", java_pattern))
    try:
        pattern = re.compile(python_pattern)
    except re.error as e:
        raise TlsConfigError(
            "ssl.principal.mapping.rules", f"Invalid rule: `{rule}`: bad regular expression {java_pattern!r} ({e})"
        ) from e
    return _Rule(pattern, java_pattern, match.group(4), match.group(6) == "L", match.group(6) == "U")


def _java_replacement(match: re.Match[str], replacement: str, group_count: int) -> str:
    """Matcher.appendReplacement's reading of a replacement: `$n`, `${name}`, `\\x` for a literal x.

    Kafka first turns a `$n` whose group does not exist into a literal (escapeLiteralBackReferences,
    which it took from Apache NiFi), when the pattern has groups at all: so does this. Kafka's version
    mis-places the escape when two or more references are out of range; this one escapes each.
    """
    out: list[str] = []
    i = 0
    while i < len(replacement):
        char = replacement[i]
        if char == "\\":
            if i + 1 == len(replacement):
                raise PrincipalMappingError(f"character to be escaped is missing in replacement {replacement!r}")
            out.append(replacement[i + 1])
            i += 2
        elif char == "$":
            i += 1
            if i == len(replacement):
                raise PrincipalMappingError(f"Illegal group reference: group index is missing in {replacement!r}")
            if replacement[i] == "{":
                close = replacement.find("}", i)
                if close < 0:
                    raise PrincipalMappingError(f"named capturing group is missing trailing '}}' in {replacement!r}")
                group_name = replacement[i + 1 : close]
                try:
                    out.append(match.group(group_name) or "")
                except IndexError as e:
                    raise PrincipalMappingError(f"No group with name {{{group_name}}}") from e
                i = close + 1
                continue
            if not "0" <= replacement[i] <= "9":
                raise PrincipalMappingError(f"Illegal group reference in {replacement!r}")
            reference = int(replacement[i])
            if group_count > 0 and reference > group_count:
                out.append("$")  # escapeLiteralBackReferences: a reference to a group that does not exist is text
                continue
            i += 1
            # further digits extend the number while it still names a group
            while i < len(replacement) and "0" <= replacement[i] <= "9":
                extended = reference * 10 + int(replacement[i])
                if extended > group_count:
                    break
                reference = extended
                i += 1
            if reference > group_count:
                raise PrincipalMappingError(f"No group {reference}")
            out.append(match.group(reference) or "")
        else:
            out.append(char)
            i += 1
    return "".join(out)
