"""TLS building blocks (server/tls.py, server/tls_principal.py) with the throwaway PKI (testing/certs.py):
contexts from Kafka's `ssl.*` configs, real handshakes in memory and over 127.0.0.1, and the principal of a
client certificate.

The principal mapping cases follow Kafka's SslPrincipalMapperTest.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from cryptography.x509.oid import NameOID

from minibroker.server import tls
from minibroker.server.tls import TlsConfigError, server_ssl_context
from minibroker.server.tls_principal import (
    ANONYMOUS,
    NoMatchingRule,
    PrincipalMappingError,
    SslPrincipalMapper,
    principal_from_certificate,
    subject_dn,
)
from minibroker.testing import certs


@dataclass(frozen=True)
class Pki:
    ca: certs.CertificateAuthority
    broker: certs.IssuedCertificate
    broker_encrypted: certs.IssuedCertificate  # key under KEY_PASSWORD
    alice: certs.IssuedCertificate
    rogue_client: certs.IssuedCertificate  # CN=alice, from a CA the broker does not trust


KEY_PASSWORD = "key-secret"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    ca = certs.make_ca(tmp_path_factory.mktemp("pki"))
    rogue_ca = certs.make_ca(tmp_path_factory.mktemp("rogue"), common_name="rogue CA")
    return Pki(
        ca=ca,
        broker=certs.make_broker_certificate(ca),
        broker_encrypted=certs.make_broker_certificate(ca, name="broker-encrypted", key_password=KEY_PASSWORD),
        alice=certs.make_client_certificate(ca, "alice"),
        rogue_client=certs.make_client_certificate(rogue_ca, "alice"),
    )


def client_context(pki: Pki, client: certs.IssuedCertificate | None = None, *, tls13: bool = True) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca.ca_path))
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.maximum_version = ssl.TLSVersion.TLSv1_3 if tls13 else ssl.TLSVersion.TLSv1_2
    if client is not None:
        context.load_cert_chain(str(client.cert_path), str(client.key_path))
    return context


def error_of(configs: Mapping[str, Any]) -> TlsConfigError:
    with pytest.raises(TlsConfigError) as caught:
        server_ssl_context(configs)
    return caught.value


# --- contexts from Kafka's configs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["PEM", "PKCS12", "inline"])
def test_keystore_loads_from_pem_file_pkcs12_and_inline_pem(pki: Pki, kind: certs.KeystoreKind) -> None:
    context = server_ssl_context(pki.broker.keystore_configs(kind))
    assert context.verify_mode == ssl.CERT_NONE
    assert (context.minimum_version, context.maximum_version) == (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3)
    assert complete_handshake(context, client_context(pki)) is None


@pytest.mark.parametrize("kind", ["PEM", "inline"])
def test_encrypted_pem_key_loads_with_ssl_key_password(pki: Pki, kind: certs.KeystoreKind) -> None:
    configs = pki.broker_encrypted.keystore_configs(kind)
    assert configs["ssl.key.password"] == KEY_PASSWORD
    assert complete_handshake(server_ssl_context(configs), client_context(pki)) is None


def test_encrypted_pem_key_without_ssl_key_password_is_refused(pki: Pki) -> None:
    configs = pki.broker_encrypted.keystore_configs("PEM")
    del configs["ssl.key.password"]
    error = error_of(configs)
    assert error.config == "ssl.key.password"
    assert "encrypted, but ssl.key.password is not set" in str(error)


def test_wrong_ssl_key_password_is_a_clear_error(pki: Pki) -> None:
    error = error_of({**pki.broker_encrypted.keystore_configs("inline"), "ssl.key.password": "wrong"})
    assert error.config == "ssl.key.password"
    assert str(error).startswith("Invalid PEM keystore configs: the private key could not be decrypted")


def test_ssl_key_password_with_an_unencrypted_key_is_refused(pki: Pki) -> None:
    error = error_of({**pki.broker.keystore_configs("PEM"), "ssl.key.password": "x"})
    assert "ssl.key.password is set, but the private key is not encrypted" in str(error)


def test_wrong_pkcs12_password_is_a_clear_error(pki: Pki) -> None:
    error = error_of({**pki.broker.keystore_configs("PKCS12"), "ssl.keystore.password": "wrong"})
    assert error.config == "ssl.keystore.password"
    assert str(error).startswith(f"Failed to load SSL keystore {pki.broker.pkcs12_path} of type PKCS12: wrong password")


def test_jks_keystore_is_refused_with_the_way_out(tmp_path: Path) -> None:
    jks = tmp_path / "server.keystore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02" + bytes(64))
    for store_type in ("JKS", None):  # None: Kafka's default type, JKS
        configs = {"ssl.keystore.location": str(jks), "ssl.keystore.password": "secret"}
        if store_type:
            configs["ssl.keystore.type"] = store_type
        message = str(error_of(configs))
        assert "JKS is not supported, use PKCS12 or PEM" in message
        assert "keytool -importkeystore" in message


def test_jks_typed_store_that_is_pkcs12_loads_as_the_jdk_does(pki: Pki) -> None:
    configs = {**pki.broker.keystore_configs("PKCS12"), "ssl.keystore.type": "JKS"}
    assert server_ssl_context(configs).verify_mode == ssl.CERT_NONE
    del configs["ssl.keystore.type"]
    server_ssl_context(configs)


def test_unsupported_store_type_is_refused(pki: Pki) -> None:
    error = error_of({**pki.broker.keystore_configs("PKCS12"), "ssl.keystore.type": "BCFKS"})
    assert error.config == "ssl.keystore.type"
    assert "store type BCFKS is not supported; use PKCS12 or PEM" in str(error)


def test_lower_case_pem_type_is_not_pem_as_in_kafka(pki: Pki) -> None:
    configs = {**pki.broker.keystore_configs("PEM"), "ssl.keystore.type": "pem", "ssl.keystore.password": "x"}
    assert "store type pem is not known; write PEM" in str(error_of(configs))


def test_inline_pem_joined_on_one_line_loads(pki: Pki) -> None:
    # what a server.properties value continued with backslashes becomes: the lines joined by spaces
    configs = pki.broker_encrypted.keystore_configs("inline")
    for name in ("ssl.keystore.key", "ssl.keystore.certificate.chain"):
        configs[name] = " ".join(configs[name].splitlines())
    assert complete_handshake(server_ssl_context(configs), client_context(pki)) is None


def test_pem_file_under_a_binary_store_type_says_to_set_pem(pki: Pki) -> None:
    configs = {**pki.broker.keystore_configs("PEM"), "ssl.keystore.type": "PKCS12", "ssl.keystore.password": "x"}
    assert "the file is PEM text; set ssl.keystore.type=PEM" in str(error_of(configs))


@pytest.mark.parametrize(
    "configs, config, message",
    [
        (
            {"ssl.keystore.type": "PEM", "ssl.keystore.location": "/nonexistent/broker.pem"},
            "ssl.keystore.location",
            "Failed to load PEM SSL keystore /nonexistent/broker.pem: no such file",
        ),
        (
            {
                "ssl.keystore.type": "PKCS12",
                "ssl.keystore.location": "/nonexistent/b.p12",
                "ssl.keystore.password": "x",
            },
            "ssl.keystore.location",
            "Failed to load SSL keystore /nonexistent/b.p12 of type PKCS12: no such file",
        ),
        (
            {"ssl.truststore.type": "PEM", "ssl.truststore.location": "/nonexistent/ca.pem"},
            "ssl.truststore.location",
            "Failed to load PEM SSL truststore /nonexistent/ca.pem: no such file",
        ),
    ],
)
def test_missing_file_is_a_clear_error(pki: Pki, configs: dict[str, str], config: str, message: str) -> None:
    merged = {**pki.broker.keystore_configs("PEM"), **configs}
    error = error_of(merged)
    assert error.config == config
    assert str(error).startswith(message)
    assert f"({config}=/nonexistent/" in str(error)


def test_kafka_refusals_of_keystore_combinations(pki: Pki) -> None:
    inline = pki.broker.keystore_configs("inline")
    no_type = {k: v for k, v in inline.items() if k != "ssl.keystore.type"}
    assert str(error_of(no_type)).startswith(
        "SSL private key can be specified only for PEM, but key store type is JKS."
    )
    chain_only = {k: v for k, v in inline.items() if k != "ssl.keystore.key"}
    assert str(error_of(chain_only)).startswith("SSL certificate chain is specified, but private key is not specified")
    key_only = {k: v for k, v in inline.items() if k != "ssl.keystore.certificate.chain"}
    assert str(error_of(key_only)).startswith("SSL private key is specified, but certificate chain is not specified")
    both = {**inline, "ssl.keystore.location": str(pki.broker.keystore_path)}
    assert str(error_of(both)).startswith("Both SSL key store location and separate private key are specified")
    for pem in (inline, pki.broker.keystore_configs("PEM")):
        assert str(error_of({**pem, "ssl.keystore.password": "x"})).startswith(
            "SSL key store password cannot be specified with PEM format, only key password may be specified"
        )
    pkcs12 = pki.broker.keystore_configs("PKCS12")
    no_password = {k: v for k, v in pkcs12.items() if k != "ssl.keystore.password"}
    assert str(error_of(no_password)).startswith("SSL key store is specified, but key store password is not specified")
    assert str(error_of({"ssl.keystore.password": "x"})).startswith(
        "SSL key store is not specified, but key store password is specified"
    )
    assert "SSL key store is not specified" in str(error_of({}))


def test_kafka_refusals_of_truststore_combinations(pki: Pki) -> None:
    keystore = pki.broker.keystore_configs("PEM")
    inline = pki.ca.truststore_configs("inline")
    assert str(error_of({**keystore, **inline, "ssl.truststore.type": "PKCS12"})).startswith(
        "SSL trust store certs can be specified only for PEM, but trust store type is PKCS12."
    )
    both = {**keystore, **inline, "ssl.truststore.location": str(pki.ca.ca_path)}
    assert str(error_of(both)).startswith("Both SSL trust store location and separate trust certificates are specified")
    for pem in (inline, pki.ca.truststore_configs("PEM")):
        error = error_of({**keystore, **pem, "ssl.truststore.password": "x"})
        assert str(error) == "SSL trust store password cannot be specified for PEM format."
    assert str(error_of({**keystore, "ssl.truststore.password": "x"})).startswith(
        "SSL trust store is not specified, but trust store password is specified"
    )


@pytest.mark.parametrize("kind", ["PEM", "PKCS12", "inline"])
def test_truststore_loads_from_pem_file_pkcs12_and_inline_pem(pki: Pki, kind: certs.KeystoreKind) -> None:
    configs = {**pki.broker.keystore_configs("PEM"), **pki.ca.truststore_configs(kind), "ssl.client.auth": "required"}
    server = server_ssl_context(configs)
    assert handshake(server, client_context(pki, pki.alice)).peer_certificate == pki.alice.der


def test_traditional_openssl_key_is_refused_as_kafka_reads_pkcs8_only(pki: Pki) -> None:
    sec1 = pki.broker.key.private_bytes(Encoding.PEM, PrivateFormat.TraditionalOpenSSL, NoEncryption()).decode()
    assert sec1.startswith("-----BEGIN EC PRIVATE KEY-----")
    error = error_of({**pki.broker.keystore_configs("inline"), "ssl.keystore.key": sec1})
    assert "Kafka reads PKCS#8 keys only" in str(error)
    assert "openssl pkcs8 -topk8" in str(error)


def test_key_that_does_not_match_the_certificate_is_refused(pki: Pki) -> None:
    error = error_of({**pki.broker.keystore_configs("inline"), "ssl.keystore.key": pki.alice.key_pem})
    assert "the private key does not match the first certificate of the chain" in str(error)


def test_pem_without_certificates_or_key_is_refused(pki: Pki) -> None:
    inline = pki.broker.keystore_configs("inline")
    no_certificate = {**inline, "ssl.keystore.certificate.chain": "not a certificate"}
    assert str(error_of(no_certificate)) == "Invalid PEM keystore configs: No matching CERTIFICATE entries in PEM file"
    no_key = {**inline, "ssl.keystore.key": pki.broker.certificate_pem}
    assert str(error_of(no_key)) == "Invalid PEM keystore configs: No matching PRIVATE KEY entries in PEM file"
    two_keys = {**inline, "ssl.keystore.key": pki.broker.key_pem + pki.broker.key_pem}
    assert str(error_of(two_keys)) == "Invalid PEM keystore configs: Expected one private key, but found 2"


@pytest.mark.parametrize(
    "value, mode",
    [(None, ssl.CERT_NONE), ("none", ssl.CERT_NONE), ("requested", ssl.CERT_OPTIONAL), ("required", ssl.CERT_REQUIRED)],
)
def test_ssl_client_auth_values(pki: Pki, value: str | None, mode: ssl.VerifyMode) -> None:
    configs = {**pki.broker.keystore_configs("PEM"), **pki.ca.truststore_configs("PEM"), "ssl.client.auth": value}
    assert server_ssl_context(configs).verify_mode == mode


def test_ssl_client_auth_is_case_sensitive_as_in_kafka(pki: Pki) -> None:
    error = error_of({**pki.broker.keystore_configs("PEM"), "ssl.client.auth": "REQUIRED"})
    assert str(error) == (
        "Invalid value REQUIRED for configuration ssl.client.auth: String must be one of: required, requested, none"
    )


@pytest.mark.parametrize(
    "protocols, versions",
    [
        ("TLSv1.3", (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3)),
        ("TLSv1.2", (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2)),
        (" TLSv1.2 , TLSv1.3 ", (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3)),
        ("TLSv1.1,TLSv1.2", (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2)),  # the JDK disables TLSv1.1
        (["TLSv1.3"], (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3)),
        ("", (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3)),
    ],
)
def test_ssl_enabled_protocols(pki: Pki, protocols: Any, versions: tuple[ssl.TLSVersion, ssl.TLSVersion]) -> None:
    context = server_ssl_context({**pki.broker.keystore_configs("PEM"), "ssl.enabled.protocols": protocols})
    assert (context.minimum_version, context.maximum_version) == versions


def test_tls13_only_listener_refuses_a_tls12_client(pki: Pki) -> None:
    server = server_ssl_context({**pki.broker.keystore_configs("PEM"), "ssl.enabled.protocols": "TLSv1.3"})
    result = handshake(server, client_context(pki, tls13=False))
    assert isinstance(result.server_error, ssl.SSLError)


def test_bad_ssl_enabled_protocols_are_refused(pki: Pki) -> None:
    keystore = pki.broker.keystore_configs("PEM")
    assert "Unsupported protocol: TLSv1.4" in str(error_of({**keystore, "ssl.enabled.protocols": "TLSv1.2,TLSv1.4"}))
    assert "TLSv1 and TLSv1.1 are disabled" in str(error_of({**keystore, "ssl.enabled.protocols": "TLSv1,TLSv1.1"}))


def test_ssl_cipher_suites_take_java_names(pki: Pki) -> None:
    keystore = pki.broker.keystore_configs("PEM")
    tls12_only = server_ssl_context({**keystore, "ssl.cipher.suites": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
    assert tls12_only.maximum_version == ssl.TLSVersion.TLSv1_2
    assert [c["name"] for c in tls12_only.get_ciphers() if c["protocol"] == "TLSv1.2"] == [
        "ECDHE-ECDSA-AES128-GCM-SHA256"
    ]
    result = handshake(tls12_only, client_context(pki))
    assert result.cipher == ("ECDHE-ECDSA-AES128-GCM-SHA256", "TLSv1.2")

    tls13_only = server_ssl_context({**keystore, "ssl.cipher.suites": "TLS_AES_256_GCM_SHA384"})
    assert tls13_only.minimum_version == ssl.TLSVersion.TLSv1_3
    error = error_of({**keystore, "ssl.cipher.suites": "ECDHE-ECDSA-AES128-GCM-SHA256"})
    assert "Unsupported CipherSuite: ECDHE-ECDSA-AES128-GCM-SHA256" in str(error)


def test_every_java_cipher_suite_name_maps_to_a_suite_openssl_knows() -> None:
    for openssl_name in tls._TLS12_CIPHER_SUITES.values():
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).set_ciphers(openssl_name)  # raises if OpenSSL does not know it


# --- handshakes -----------------------------------------------------------------------------------------------------


@dataclass
class Handshake:
    peer_certificate: bytes | None = None
    cipher: tuple[str, str] | None = None
    server_error: Exception | None = None
    client_error: Exception | None = None


def handshake(server_context: ssl.SSLContext, client_context: ssl.SSLContext, host: str = "localhost") -> Handshake:
    """Run a TLS handshake and one round trip between two in-memory endpoints (sans-IO, as the connection will)."""
    server_in, server_out, client_in, client_out = (ssl.MemoryBIO() for _ in range(4))
    server = server_context.wrap_bio(server_in, server_out, server_side=True)
    client = client_context.wrap_bio(client_in, client_out, server_hostname=host)
    result = Handshake()
    server_done = client_done = False
    for _ in range(20):
        if not client_done and result.client_error is None:
            try:
                client.do_handshake()
                client_done = True
                client.write(b"ping")
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError as e:
                result.client_error = e
        server_in.write(client_out.read())
        if not server_done and result.server_error is None:
            try:
                server.do_handshake()
                server_done = True
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError as e:
                result.server_error = e
        if server_done and result.server_error is None:
            try:
                if server.read(4) == b"ping":
                    server.write(b"pong")
                    result.peer_certificate = server.getpeercert(binary_form=True)
                    cipher = server.cipher()
                    result.cipher = (cipher[0], cipher[1]) if cipher else None
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError as e:
                result.server_error = e
        client_in.write(server_out.read())
        if client_done and result.client_error is None:
            try:
                if client.read(4) == b"pong":
                    return result
            except ssl.SSLWantReadError:
                pass
            except ssl.SSLError as e:
                result.client_error = e
        if result.server_error is not None and (result.client_error is not None or not server_out.pending):
            return result
    raise AssertionError("handshake made no progress")


def complete_handshake(server_context: ssl.SSLContext, client_context: ssl.SSLContext) -> bytes | None:
    result = handshake(server_context, client_context)
    assert result.server_error is None and result.client_error is None, result
    return result.peer_certificate


@pytest.mark.parametrize("tls13", [True, False], ids=["TLSv1.3", "TLSv1.2"])
@pytest.mark.parametrize(
    "client_auth, with_certificate, principal",
    [
        ("none", False, ANONYMOUS),
        ("none", True, ANONYMOUS),  # the server never asks, so the client never sends it
        ("requested", False, ANONYMOUS),
        ("requested", True, "User:CN=alice"),
        ("required", True, "User:CN=alice"),
        ("required", False, None),  # refused
    ],
)
def test_client_auth_handshake_and_principal(
    pki: Pki, tls13: bool, client_auth: str, with_certificate: bool, principal: str | None
) -> None:
    configs = {**pki.broker.keystore_configs("PEM"), **pki.ca.truststore_configs("PEM"), "ssl.client.auth": client_auth}
    client = client_context(pki, pki.alice if with_certificate else None, tls13=tls13)
    result = handshake(server_ssl_context(configs), client)
    if principal is None:
        assert isinstance(result.server_error, ssl.SSLError)
        assert "certificate" in str(result.server_error).lower()
    else:
        assert result.server_error is None and result.client_error is None
        assert principal_from_certificate(result.peer_certificate, "DEFAULT") == principal


@pytest.mark.parametrize("client_auth", ["requested", "required"])
def test_client_certificate_from_an_untrusted_ca_is_refused(pki: Pki, client_auth: str) -> None:
    configs = {**pki.broker.keystore_configs("PEM"), **pki.ca.truststore_configs("PEM"), "ssl.client.auth": client_auth}
    result = handshake(server_ssl_context(configs), client_context(pki, pki.rogue_client))
    assert isinstance(result.server_error, ssl.SSLError)
    assert "certificate verify failed" in str(result.server_error)


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])
def test_broker_certificate_verifies_for_localhost_and_127_0_0_1(pki: Pki, host: str) -> None:
    result = handshake(server_ssl_context(pki.broker.keystore_configs("PEM")), client_context(pki), host=host)
    assert result.server_error is None and result.client_error is None


def test_broker_certificate_does_not_verify_for_another_host(pki: Pki) -> None:
    result = handshake(server_ssl_context(pki.broker.keystore_configs("PEM")), client_context(pki), host="example.org")
    assert isinstance(result.client_error, ssl.SSLCertVerificationError)


async def test_mutual_tls_over_a_127_0_0_1_socket(pki: Pki) -> None:
    configs = {
        **pki.broker.keystore_configs("PKCS12"),
        **pki.ca.truststore_configs("PEM"),
        "ssl.client.auth": "required",
    }

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readexactly(4)
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        writer.write(principal_from_certificate(der, "RULE:^CN=(.*)$/$1/U").encode())
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=server_ssl_context(configs))
    try:
        port = server.sockets[0].getsockname()[1]
        client = client_context(pki, pki.alice)
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", port, ssl=client, server_hostname="localhost"), 10
        )
        writer.write(b"ping")
        assert await asyncio.wait_for(reader.read(), 10) == b"User:ALICE"
        writer.close()
    finally:
        server.close()
        await server.wait_closed()


# --- the subject as Java renders it ---------------------------------------------------------------------------------


def certificate_for(pki: Pki, *attributes: x509.NameAttribute | x509.RelativeDistinguishedName) -> bytes:
    rdns = [
        a if isinstance(a, x509.RelativeDistinguishedName) else x509.RelativeDistinguishedName([a]) for a in attributes
    ]
    return certs.make_client_certificate(pki.ca, "", subject=x509.Name(rdns), name="subject-test").der


def test_subject_is_rfc2253_with_the_last_rdn_first(pki: Pki) -> None:
    der = certificate_for(
        pki,
        x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
        x509.NameAttribute(NameOID.STATE_OR_PROVINCE_NAME, "MD"),
        x509.NameAttribute(NameOID.LOCALITY_NAME, "Fulton"),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "acme"),
        x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "eng"),
        x509.NameAttribute(NameOID.COMMON_NAME, "alice"),
    )
    assert subject_dn(der) == "CN=alice,OU=eng,O=acme,L=Fulton,ST=MD,C=US"
    assert principal_from_certificate(der, None) == "User:CN=alice,OU=eng,O=acme,L=Fulton,ST=MD,C=US"


def test_subject_keywords_are_java_rfc2253_ones_others_are_oids_in_hex(pki: Pki) -> None:
    der = certificate_for(
        pki,
        x509.NameAttribute(NameOID.DOMAIN_COMPONENT, "com"),
        x509.NameAttribute(NameOID.DOMAIN_COMPONENT, "example"),
        x509.NameAttribute(NameOID.USER_ID, "u42"),
        x509.NameAttribute(NameOID.STREET_ADDRESS, "Main St"),
        x509.NameAttribute(NameOID.EMAIL_ADDRESS, "a@b.c"),
        x509.NameAttribute(NameOID.TITLE, "Dr"),
    )
    # emailAddress is an IA5String (tag 0x16), title a UTF8String (0x0c)
    assert subject_dn(der) == (
        "2.5.4.12=#0c024472,1.2.840.113549.1.9.1=#16056140622e63,STREET=Main St,UID=u42,DC=example,DC=com"
    )


@pytest.mark.parametrize(
    "value, rendered",
    [
        ("Tkac, Adam", "Tkac\\, Adam"),
        ('a+b=c<d>e;f"g\\h', 'a\\+b\\=c\\<d\\>e\\;f\\"g\\\\h'),
        ("#1 and #2", "\\#1 and \\#2"),  # Java escapes '#' everywhere, not only in front
        ("  padded ", "\\ \\ padded\\ "),
        ("über_alles@x", "über_alles@x"),  # other characters stay as they are
    ],
)
def test_subject_values_are_escaped_as_java_escapes_them(pki: Pki, value: str, rendered: str) -> None:
    der = certificate_for(pki, x509.NameAttribute(NameOID.COMMON_NAME, value))
    assert subject_dn(der) == "CN=" + rendered


def test_multi_valued_rdn_is_joined_with_plus(pki: Pki) -> None:
    der = certificate_for(
        pki,
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "acme"),
        x509.RelativeDistinguishedName(
            [x509.NameAttribute(NameOID.COMMON_NAME, "alice"), x509.NameAttribute(NameOID.USER_ID, "a1")]
        ),
    )
    first, organization = subject_dn(der).split(",")
    assert sorted(first.split("+")) == ["CN=alice", "UID=a1"]
    assert organization == "O=acme"


def test_subject_of_garbage_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not a DER X.509 certificate"):
        subject_dn(b"\x30\x03\x02\x01")


def test_no_certificate_is_anonymous() -> None:
    assert principal_from_certificate(None, "RULE:^CN=(.*)$/$1/") == "User:ANONYMOUS"


# --- ssl.principal.mapping.rules (cases from Kafka's SslPrincipalMapperTest) ----------------------------------------


@pytest.mark.parametrize(
    "rules",
    [
        "DEFAULT",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT",
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/",
        "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L",
        "RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U",
        "RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/",
        "RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/",
    ],
)
def test_valid_rules(rules: str) -> None:
    SslPrincipalMapper(rules)


@pytest.mark.parametrize(
    "rules",
    [
        "default",
        "DEFAUL",
        "DEFAULT/L",
        "DEFAULT/U",
        "RULE:CN=(.*?),OU=ServiceUsers.*/$1",
        "rule:^CN=(.*?),OU=ServiceUsers.*$/$1/",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/L",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/U",
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/LU",
        "RULE:^CN=(unclosed/$1/",  # not a regular expression
    ],
)
def test_invalid_rules(rules: str) -> None:
    with pytest.raises(TlsConfigError, match="Invalid rule") as caught:
        SslPrincipalMapper(rules)
    assert caught.value.config == "ssl.principal.mapping.rules"


MAPPING_RULES = ", ".join(
    [
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L",
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
        "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U",
        "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U",
        "DEFAULT",
    ]
)


@pytest.mark.parametrize(
    "dn, name",
    [
        ("CN=Duke,OU=ServiceUsers,O=Org,C=US", "duke"),
        ("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US", "duke@sme"),
        ("cn=duke,ou=sme,dc=mycp,dc=com", "DUKE@SME"),
        ("cN=duke,OU=JavaSoft,O=Sun Microsystems", "DUKE"),
        ("OU=JavaSoft,O=Sun Microsystems,C=US", "OU=JavaSoft,O=Sun Microsystems,C=US"),
    ],
)
def test_first_matching_rule_gives_the_name(dn: str, name: str) -> None:
    assert SslPrincipalMapper(MAPPING_RULES).get_name(dn) == name


@pytest.mark.parametrize(
    "rules, parsed",
    [
        ("", "[]"),
        ("DEFAULT", "[DEFAULT]"),
        ("RULE://", "[RULE:/]"),
        ("RULE:/.*/", "[RULE:/.*]"),
        ("RULE:/.*/L", "[RULE:/.*/L]"),
        ("RULE://,DEFAULT", "[RULE:/, DEFAULT]"),
        ("  RULE:// ,  DEFAULT  ", "[RULE:/, DEFAULT]"),
        ("  RULE:   /     / ,  DEFAULT  ", "[RULE:   /     , DEFAULT]"),
        ("  RULE:  /     /U   ,DEFAULT  ", "[RULE:  /     /U, DEFAULT]"),
        ("  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  ", "[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]"),
        # empty rules are ignored
        (",   , , ,      , , ,   ", "[]"),
        (",,RULE://,,,DEFAULT,,", "[RULE:/, DEFAULT]"),
        (",  , RULE: /   /    ,,,   DEFAULT, ,   ", "[RULE: /   , DEFAULT]"),
        ("     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,", "[RULE:   /  /U, DEFAULT]"),
        # escape sequences
        (r"RULE:\/\\\(\)\n\t/\/\//", r"[RULE:\/\\\(\)\n\t/\/\/]"),
        (r"RULE:\**\/+/*/L,RULE:\/*\**/**/", r"[RULE:\**\/+/*/L, RULE:\/*\**/**]"),
        # rules rule
        (
            r"RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT",
            r"[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]",
        ),
    ],
)
def test_rules_split_as_kafka_splits_them(rules: str, parsed: str) -> None:
    assert str(SslPrincipalMapper(rules)) == f"SslPrincipalMapper(rules = {parsed})"


def test_escaped_comma_with_whitespace_in_a_name() -> None:
    mapper = SslPrincipalMapper(r"RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT")
    assert mapper.get_name(r"CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz") == r"Tkac\, Adam"


def test_rule_matches_the_name_java_renders(pki: Pki) -> None:
    der = certificate_for(
        pki,
        x509.NameAttribute(NameOID.DOMAIN_COMPONENT, "cz"),
        x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "ITZ"),
        x509.NameAttribute(NameOID.COMMON_NAME, "Tkac, Adam"),
    )
    assert principal_from_certificate(der, r"RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/L,DEFAULT") == r"User:tkac\, adam"


@pytest.mark.parametrize(
    "rule, dn, name",
    [
        ("RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1@$4/", "CN=duke,OU=sme,O=acme", "duke@$4"),  # no group 4: literal
        ("RULE:^CN=(.*?),OU=(.*?)$/$12/", "CN=duke,OU=sme", "duke2"),  # $12 is group 1 then '2'
        (r"RULE:^CN=(.*?),.*$/\$1 $1/", "CN=duke,O=acme", "$1 duke"),
        ("RULE:^CN=(?<user>[^,]+),.*$/${user}/U", "CN=duke,O=acme", "DUKE"),  # Java's named groups
        ("RULE:^CN=([^,]+)(,OU=([^,]+))?$/$1:$3/", "CN=duke", "duke:"),  # a group that did not take part is empty
        ("RULE:^CN=duke.*$/service/", "CN=duke,O=acme", "service"),
    ],
)
def test_replacement_is_read_as_java_reads_it(rule: str, dn: str, name: str) -> None:
    assert SslPrincipalMapper(rule).get_name(dn) == name


def test_no_matching_rule_fails_the_mapping(pki: Pki) -> None:
    rules = "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/"
    with pytest.raises(NoMatchingRule, match=r"No rules apply to CN=alice, rules \[RULE:"):
        SslPrincipalMapper(rules).get_name("CN=alice")
    with pytest.raises(PrincipalMappingError, match="Failed to map name for 'CN=alice' based on SSL principal mapping"):
        principal_from_certificate(pki.alice.der, rules)


def test_reference_to_a_missing_group_without_groups_fails_the_mapping(pki: Pki) -> None:
    with pytest.raises(PrincipalMappingError, match="No group 1"):
        principal_from_certificate(pki.alice.der, "RULE:^CN=alice$/$1/")


# --- the test PKI ---------------------------------------------------------------------------------------------------


def test_test_pki_files(pki: Pki) -> None:
    assert pki.ca.ca_path.read_text().startswith("-----BEGIN CERTIFICATE-----")
    for issued in (pki.broker, pki.alice):
        assert issued.key_path.stat().st_mode & 0o077 == 0
        assert issued.keystore_path.read_text().count("-----BEGIN CERTIFICATE-----") == 1
        validity = issued.certificate.not_valid_after_utc - issued.certificate.not_valid_before_utc
        assert validity <= certs.VALIDITY + certs.CLOCK_SKEW
    names = pki.broker.certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    assert pki.broker_encrypted.key_pem.startswith("-----BEGIN ENCRYPTED PRIVATE KEY-----")


def test_rsa_certificates_work_too(tmp_path: Path) -> None:
    ca = certs.make_ca(tmp_path, key_type="rsa")
    broker = certs.make_broker_certificate(ca, key_type="rsa")
    client = ssl.create_default_context(cafile=str(ca.ca_path))
    result = handshake(server_ssl_context(broker.keystore_configs("PKCS12")), client)
    assert result.server_error is None and result.client_error is None
