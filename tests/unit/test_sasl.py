"""SASL mechanisms and credential stores (server/sasl/), driven by independent client implementations.

kafka-python's and aiokafka's own SASL clients produce the client messages (differential tests);
RFC 7677's exchange is a known answer. With java and the Kafka client jars present, Kafka 4.3.1's
own JaasConfig, PlainSaslServer, ScramSaslServer and ScramSaslClient run on the same inputs and
the outcomes must match (test_*_as_kafka).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from aiokafka.conn import OAuthAuthenticator, SaslPlainAuthenticator, ScramAuthenticator
from kafka.admin import UserScramCredentialUpsertion
from kafka.net.sasl.oauth import AbstractTokenProvider, SaslMechanismOAuth
from kafka.net.sasl.plain import SaslMechanismPlain
from kafka.net.sasl.scram import ScramClient

from minibroker.core.clock import ManualClock
from minibroker.core.credentials import (
    CredentialError,
    CredentialStore,
    credential_from_salted_password,
    credential_from_string,
    credential_to_string,
    parse_add_scram,
    scram_from_password,
    secure_random_string,
)
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.jaas import JaasConfigError, JaasEntry, load_server_jaas, parse_jaas_config
from minibroker.server.sasl.base import SaslAuthenticationError, SaslFatalError, SaslServer
from minibroker.server.sasl.mechanism import (
    SaslServerConfig,
    UnsupportedSaslMechanismError,
    generic_failure_message,
    new_sasl_server,
)
from minibroker.server.sasl.oauthbearer import (
    OAuthBearerConfigError,
    OAuthBearerSaslServer,
    UnsecuredValidatorOptions,
    parse_unsecured_jws,
)
from minibroker.server.sasl.plain import PlainSaslServer, split_plain_message
from minibroker.server.sasl.scram import (
    EXTENSIONS_SALT,
    ScramSaslServer,
    kafka_extensions_order,
    sasl_name_from_username,
    username_from_sasl_name,
)

SCRAM = ("SCRAM-SHA-256", "SCRAM-SHA-512")
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="x" '
              'user_admin="x" user_alice="secret";')
NOW_MS = 1_700_000_000_000
AUTHZID_DIFFERS = "Authentication failed: Client requested an authorization id that is different from username"


def generic(mechanism: str) -> str:
    return f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"


@pytest.fixture
def store() -> CredentialStore:
    credentials = CredentialStore()
    credentials.set_plain_users_from_jaas(PLAIN_JAAS)
    for mechanism in SCRAM:
        credentials.put_scram("alice", mechanism, scram_from_password("alice-secret", mechanism, 4096))
    return credentials


def refused(server: SaslServer, token: bytes) -> SaslAuthenticationError:
    with pytest.raises(SaslAuthenticationError) as info:
        server.evaluate(token)
    assert server.failed and not server.complete
    return info.value


# --- PLAIN ---------------------------------------------------------------------------------------

def test_plain_kafka_python_client_authenticates(store: CredentialStore) -> None:
    client = SaslMechanismPlain(sasl_plain_username="alice", sasl_plain_password="secret")
    server = new_sasl_server("PLAIN", store)
    answer = server.evaluate(client.auth_bytes())
    client.receive(answer)
    assert client.is_done() and client.is_authenticated()
    assert server.complete and server.authorization_id == "alice" and server.credential_expiry_ms is None


def test_plain_aiokafka_client_authenticates(store: CredentialStore) -> None:
    client = SaslPlainAuthenticator(loop=None, sasl_plain_username="admin", sasl_plain_password="x")
    token, expects_answer = client._step(None)
    server = new_sasl_server("PLAIN", store)
    assert expects_answer and client._step(server.evaluate(token)) is None
    assert server.authorization_id == "admin"


@pytest.mark.parametrize("token", [b"\x00alice\x00wrong", b"\x00nobody\x00secret", b"\x00admin\x00secret",
                                   b"\x00alice\x00Secret"])
def test_plain_wrong_password_or_unknown_user_is_explained(store: CredentialStore, token: bytes) -> None:
    error = refused(new_sasl_server("PLAIN", store), token)
    assert error.message == "Authentication failed: Invalid username or password"


def test_plain_authorization_id_must_be_empty_or_the_username(store: CredentialStore) -> None:
    assert new_sasl_server("PLAIN", store).evaluate(b"alice\x00alice\x00secret") == b""
    error = refused(new_sasl_server("PLAIN", store), b"admin\x00alice\x00secret")
    assert error.message == AUTHZID_DIFFERS
    # the password is checked first: a wrong one is reported as such even with another authzid
    error = refused(new_sasl_server("PLAIN", store), b"admin\x00alice\x00wrong")
    assert error.message == "Authentication failed: Invalid username or password"


@pytest.mark.parametrize(("token", "message"), [
    (b"", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"),
    (b"alice\x00secret", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"),
    (b"\x00alice\x00secret\x00", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"),
    (b"\x00alice\x00secret\x00x\x00y", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"),
    (b"\x00\x00secret", "Authentication failed: username not specified"),
    (b"\x00alice\x00", "Authentication failed: password not specified"),
])
def test_plain_malformed_messages_are_explained(store: CredentialStore, token: bytes, message: str) -> None:
    error = refused(new_sasl_server("PLAIN", store), token)
    assert error.message == message
    assert split_plain_message("a\x00b\x00c\x00d\x00e") == ["a", "b", "c", "d"]


def test_plain_invalid_utf8_is_a_wrong_password_not_a_crash(store: CredentialStore) -> None:
    error = refused(new_sasl_server("PLAIN", store), b"\x00alice\x00\xff\xfe")
    assert error.message == "Authentication failed: Invalid username or password"


def test_an_exchange_is_over_after_success_or_failure(store: CredentialStore) -> None:
    server = new_sasl_server("PLAIN", store)
    server.evaluate(b"\x00alice\x00secret")
    with pytest.raises(SaslFatalError, match="Unexpected challenge in Sasl server state COMPLETE"):
        server.evaluate(b"\x00alice\x00secret")
    failed = new_sasl_server("PLAIN", store)
    refused(failed, b"\x00alice\x00wrong")
    with pytest.raises(SaslFatalError, match="state FAILED"):
        failed.evaluate(b"\x00alice\x00secret")
    with pytest.raises(RuntimeError, match="has not completed"):
        _ = failed.authorization_id


def test_reauthentication_changes_the_generic_message(store: CredentialStore) -> None:
    server = new_sasl_server("SCRAM-SHA-256", store, reauthenticating=True)
    error = refused(server, b"")
    assert error.message == ("Authentication failed during re-authentication due to invalid credentials with "
                             "SASL mechanism SCRAM-SHA-256")
    assert generic_failure_message("SCRAM-SHA-256", True) == error.message


def test_unsupported_mechanism_is_refused_with_kafkas_message(store: CredentialStore) -> None:
    with pytest.raises(UnsupportedSaslMechanismError, match="^Unsupported SASL mechanism GSSAPI$"):
        new_sasl_server("GSSAPI", store)
    with pytest.raises(UnsupportedSaslMechanismError):
        new_sasl_server("plain", store)  # names are case-sensitive, as Kafka's enabled list is


# --- SCRAM ---------------------------------------------------------------------------------------

def scram_exchange(server: SaslServer, client: ScramClient) -> bytes:
    client.process_server_first_message(server.evaluate(client.first_message()))
    final = server.evaluate(client.final_message())
    client.process_server_final_message(final)  # raises if the server signature is wrong
    return final


@pytest.mark.parametrize("mechanism", SCRAM)
def test_scram_kafka_python_client_authenticates(store: CredentialStore, mechanism: str) -> None:
    server = new_sasl_server(mechanism, store)
    final = scram_exchange(server, ScramClient("alice", "alice-secret", mechanism))
    assert final.startswith(b"v=") and server.complete and server.authorization_id == "alice"


@pytest.mark.parametrize("mechanism", SCRAM)
def test_scram_aiokafka_client_authenticates_with_escaped_username(mechanism: str) -> None:
    store = CredentialStore()
    store.put_scram("a,b=c", mechanism, scram_from_password("pw", mechanism, 4096))
    client = ScramAuthenticator(loop=None, sasl_plain_username="a,b=c", sasl_plain_password="pw",
                                sasl_mechanism=mechanism)
    server = new_sasl_server(mechanism, store)
    first, _ = client._step(None)
    assert first.startswith(b"n,,n=a=2Cb=3Dc,r=")
    final, _ = client._step(server.evaluate(first))
    assert client._step(server.evaluate(final)) is None  # the client checked the server signature
    assert server.authorization_id == "a,b=c"


def test_scram_sha_256_rfc_7677_exchange() -> None:
    store = CredentialStore()
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    store.put_scram("user", "SCRAM-SHA-256", scram_from_password("pencil", "SCRAM-SHA-256", 4096, salt))
    server = ScramSaslServer("SCRAM-SHA-256", store, server_nonce=lambda: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
    assert server.evaluate(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO") == (
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
    assert server.evaluate(b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                           b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=") == (
        b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
    assert server.complete and server.authorization_id == "user"


@pytest.mark.parametrize("mechanism", SCRAM)
def test_scram_credentials_from_the_admin_client_upsertion(mechanism: str) -> None:
    upsertion = UserScramCredentialUpsertion("bob", mechanism, "bob-secret", iterations=8192)
    store = CredentialStore()
    store.upsert_scram(upsertion.user, int(upsertion.mechanism), upsertion.iterations, upsertion.salt,
                       upsertion.salted_password)
    assert store.scram_credential("bob", mechanism).iterations == 8192  # type: ignore[union-attr]
    scram_exchange(new_sasl_server(mechanism, store), ScramClient("bob", "bob-secret", mechanism))
    server = new_sasl_server(mechanism, store)
    client = ScramClient("bob", "wrong", mechanism)
    client.process_server_first_message(server.evaluate(client.first_message()))
    error = refused(server, client.final_message())
    assert error.message == generic(mechanism) and error.reason == "Invalid client credentials"


@pytest.mark.parametrize("mechanism", SCRAM)
def test_scram_wrong_password_fails_at_the_final_message(store: CredentialStore, mechanism: str) -> None:
    server = new_sasl_server(mechanism, store)
    client = ScramClient("alice", "not-it", mechanism)
    client.process_server_first_message(server.evaluate(client.first_message()))
    error = refused(server, client.final_message())
    assert error.message == generic(mechanism) and error.reason == "Invalid client credentials"


def test_scram_unknown_user_fails_at_the_first_message(store: CredentialStore) -> None:
    error = refused(new_sasl_server("SCRAM-SHA-256", store), ScramClient("mallory", "x", "SCRAM-SHA-256")
                    .first_message())
    assert error.message == generic("SCRAM-SHA-256")
    assert error.reason == "Authentication failed: Invalid user credentials"


def test_scram_credentials_are_per_mechanism() -> None:
    store = CredentialStore()
    store.put_scram("carol", "SCRAM-SHA-512", scram_from_password("pw", "SCRAM-SHA-512"))
    error = refused(new_sasl_server("SCRAM-SHA-256", store), b"n,,n=carol,r=abc")
    assert error.reason == "Authentication failed: Invalid user credentials"


@pytest.mark.parametrize("token", [
    b"",
    b"n,,",
    b"y,,n=alice,r=abc",  # client supports channel binding: Kafka only takes 'n'
    b"p=tls-unique,,n=alice,r=abc",
    b"n,,n=alice",  # no nonce
    b"n,,r=abc,n=alice",
    b"n,,n=alice,r=",
    b"n,,n=al,ice,r=abc",
    b"n,,n=al=ice,r=abc",  # '=' must be escaped as =3D
    b"n,,n=\xc3\xa9,r=abc",  # Kafka's grammar is ASCII only
    b"n,,n=alice,r=ab c",
    b"n,,n=alice,r=abc,1x=y",  # extension names are letters
    b"\x00\x01\x02",
    b"n,,n=alice,r=abc\xff",
])
def test_scram_malformed_client_first_gets_the_generic_message(store: CredentialStore, token: bytes) -> None:
    error = refused(new_sasl_server("SCRAM-SHA-256", store), token)
    assert error.message == generic("SCRAM-SHA-256")
    assert error.reason.startswith("Invalid SCRAM client first message format: ")


def test_scram_authorization_id_other_than_the_user_is_explained(store: CredentialStore) -> None:
    error = refused(new_sasl_server("SCRAM-SHA-512", store), b"n,a=admin,n=alice,r=abc")
    assert error.message == AUTHZID_DIFFERS
    assert new_sasl_server("SCRAM-SHA-512", store).evaluate(b"n,a=alice,n=alice,r=abc").startswith(b"r=abc")


class ExtendedScramClient(ScramClient):
    """kafka-python's client with extensions in its client-first message (and so in its AuthMessage)."""

    def __init__(self, user: str, password: str, mechanism: str, extensions: str) -> None:
        super().__init__(user, password, mechanism)
        self.extensions = extensions.encode()

    def first_message(self) -> bytes:
        bare = b"n=" + self.user + b",r=" + self.nonce + b"," + self.extensions
        self.auth_message += bare
        return b"n,," + bare


def test_scram_unknown_extensions_are_ignored_but_signed(store: CredentialStore) -> None:
    server = new_sasl_server("SCRAM-SHA-256", store)
    scram_exchange(server, ExtendedScramClient("alice", "alice-secret", "SCRAM-SHA-256", "traceid=42"))
    assert server.complete and server.extensions == {"traceid": "42"}  # type: ignore[attr-defined]


#: Kafka 4.3.1's ClientFirstMessage.clientFirstMessageBare for three JVMs, with their ImmutableCollections salt
KAFKA_BARE_ORDERS = {
    3917303144: (["a", "b"], ["zz", "a", "q", "k"], ["six", "two", "one", "four", "seven", "five", "three"]),
    1955043787: (["b", "a"], ["q", "a", "zz", "k"], ["four", "one", "two", "six", "three", "five", "seven"]),
    3134566837: (["a", "b"], ["k", "q", "a", "zz"], ["seven", "four", "one", "two", "six", "three", "five"]),
}


@pytest.mark.parametrize("salt", sorted(KAFKA_BARE_ORDERS))
def test_scram_extension_order_is_kafkas_for_a_jvm_salt(salt: int) -> None:
    # the client-first messages listed b,a / k,a,zz,q / one..seven; Kafka's order depends on the JVM's salt
    key_sets = (["b", "a"], ["k", "a", "zz", "q"], ["one", "two", "three", "four", "five", "six", "seven"])
    for keys, expected in zip(key_sets, KAFKA_BARE_ORDERS[salt], strict=True):
        assert list(kafka_extensions_order([(k, str(i)) for i, k in enumerate(keys)], salt)) == expected
    # a repeated key keeps its first place and takes its last value, as Utils.parseMap's HashMap does
    assert kafka_extensions_order([("a", "1"), ("b", "2"), ("a", "3")], salt)["a"] == "3"


def test_scram_extensions_are_signed_in_kafkas_map_order(store: CredentialStore) -> None:
    # Kafka rebuilds client-first-bare from the extensions map: a client that listed them otherwise fails
    first, second = list(kafka_extensions_order([("b", "1"), ("a", "2")]))
    assert (first, second) in (("a", "b"), ("b", "a"))
    scram_exchange(new_sasl_server("SCRAM-SHA-256", store),
                   ExtendedScramClient("alice", "alice-secret", "SCRAM-SHA-256", f"{first}=1,{second}=2"))
    server = new_sasl_server("SCRAM-SHA-256", store)
    client = ExtendedScramClient("alice", "alice-secret", "SCRAM-SHA-256", f"{second}=2,{first}=1")
    client.process_server_first_message(server.evaluate(client.first_message()))
    assert refused(server, client.final_message()).reason == "Invalid client credentials"
    # a server on another salt may take the other order: the same client then authenticates
    other_salt = next(salt for salt in range(EXTENSIONS_SALT + 1, EXTENSIONS_SALT + 100)
                      if list(kafka_extensions_order([("a", ""), ("b", "")], salt)) != [first, second])
    scram_exchange(ScramSaslServer("SCRAM-SHA-256", store, extensions_salt=other_salt),
                   ExtendedScramClient("alice", "alice-secret", "SCRAM-SHA-256", f"{second}=2,{first}=1"))


def test_scram_token_authentication_fails_without_delegation_tokens(store: CredentialStore) -> None:
    error = refused(new_sasl_server("SCRAM-SHA-256", store), b"n,,n=alice,r=abc,tokenauth=true")
    assert error.message == generic("SCRAM-SHA-256")
    assert error.reason == "Token Authentication failed: Invalid tokenId : alice"
    # any other value is not token authentication
    assert new_sasl_server("SCRAM-SHA-256", store).evaluate(b"n,,n=alice,r=abc,tokenauth=yes").startswith(b"r=")


def test_scram_stored_iterations_below_the_minimum_are_refused() -> None:
    store = CredentialStore()
    salt = b"salt"
    mechanism = "SCRAM-SHA-256"
    weak = credential_from_salted_password(mechanism, salt, b"\x01" * 32, 1000)
    store.put_scram("weak", mechanism, weak)
    error = refused(new_sasl_server(mechanism, store), b"n,,n=weak,r=abc")
    assert error.reason == "Iterations 1000 is less than the minimum 4096 for SCRAM_SHA_256"


def first_exchange(store: CredentialStore, mechanism: str = "SCRAM-SHA-256") -> tuple[SaslServer, ScramClient]:
    server = new_sasl_server(mechanism, store)
    client = ScramClient("alice", "alice-secret", mechanism)
    client.process_server_first_message(server.evaluate(client.first_message()))
    return server, client


def test_scram_nonce_mismatch_in_the_final_message(store: CredentialStore) -> None:
    server, client = first_exchange(store)
    client.nonce = client.nonce[:-1] + (b"x" if not client.nonce.endswith(b"x") else b"y")
    error = refused(server, client.final_message())
    assert error.reason == "Invalid client nonce in the final client message."


@pytest.mark.parametrize("final", [
    b"",  # a truncated exchange: nothing where the client-final should be
    b"c=biws",
    b"c=biws,r={nonce}",
    b"c=biws,r={nonce},p=@@@@",  # bad base64
    b"c=biws,r={nonce},p=abc",  # base64 without its padding
    b"c=bi*s,r={nonce},p=AAAA",
    b"r={nonce},c=biws,p=AAAA",
])
def test_scram_malformed_client_final_gets_the_generic_message(store: CredentialStore, final: bytes) -> None:
    server, client = first_exchange(store)
    error = refused(server, final.replace(b"{nonce}", client.nonce))
    assert error.message == generic("SCRAM-SHA-256")
    assert error.reason.startswith("Invalid SCRAM client final message format: ")


@pytest.mark.parametrize("proof", [b"", b"AAAA", base64.b64encode(b"\x00" * 64)])
def test_scram_proof_of_the_wrong_length_closes_without_an_answer(store: CredentialStore, proof: bytes) -> None:
    # Kafka's ScramFormatter.xor throws IllegalArgumentException there, which nothing catches
    server, client = first_exchange(store)
    with pytest.raises(SaslFatalError, match="same length"):
        server.evaluate(b"c=biws,r=" + client.nonce + b",p=" + proof)
    assert server.failed


def test_scram_channel_binding_is_signed_as_kafka_rebuilds_it(store: CredentialStore) -> None:
    # Kafka does not compare c= with the gs2 header; it re-encodes what it decoded into the AuthMessage
    server, client = first_exchange(store)
    final = client.final_message().replace(b"c=biws", b"c=eCws")  # "x,," instead of "n,,"
    assert refused(server, final).reason == "Invalid client credentials"


def test_sasl_names_escape_and_unescape() -> None:
    assert sasl_name_from_username("a,b=c") == "a=2Cb=3Dc"
    assert username_from_sasl_name("a=2Cb=3Dc") == "a,b=c"
    with pytest.raises(ValueError, match="Invalid username: a=2Db"):
        username_from_sasl_name("a=2Db")


# --- SCRAM credentials ----------------------------------------------------------------------------

def test_scram_credential_derivation_matches_the_client_side_keys() -> None:
    client = ScramClient("u", "pw", "SCRAM-SHA-512")
    client.create_salted_password(b"NaCl", 4096)
    salted = client.salted_password
    credential = scram_from_password("pw", "SCRAM-SHA-512", 4096, b"NaCl")
    client_key = client.hmac(salted, b"Client Key")
    assert credential.stored_key == client.hashfunc(client_key).digest()
    assert credential.server_key == client.hmac(salted, b"Server Key")
    assert credential == credential_from_salted_password("SCRAM-SHA-512", b"NaCl", salted, 4096)
    assert "hidden" in repr(credential) and "NaCl" not in repr(credential)


def test_default_salts_are_random_base36_strings() -> None:
    a, b = scram_from_password("pw", "SCRAM-SHA-256"), scram_from_password("pw", "SCRAM-SHA-256")
    assert a.salt != b.salt and a.stored_key != b.stored_key
    assert a.salt.decode().isalnum() and len(secure_random_string()) <= 26


@pytest.mark.parametrize(("user", "mechanism", "iterations", "error", "message"), [
    ("", "SCRAM-SHA-256", 4096, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
    ("bob", 0, 4096, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
    ("bob", 3, 4096, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
    ("bob", "SCRAM-SHA-256", 4095, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
    ("bob", 2, 16385, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
])
def test_upsertions_the_controller_refuses(user: str, mechanism: str | int, iterations: int, error: ErrorCode,
                                           message: str) -> None:
    store = CredentialStore()
    with pytest.raises(CredentialError) as info:
        store.upsert_scram(user, mechanism, iterations, b"salt", b"\x00" * 32)
    assert (info.value.error, info.value.message) == (error, message)
    assert list(store) == []


def test_upsert_replace_and_delete() -> None:
    store = CredentialStore()
    store.upsert_scram("bob", 1, 4096, b"s1", b"\x01" * 32)
    store.upsert_scram("bob", "SCRAM-SHA-256", 16384, b"s2", b"\x02" * 32)
    store.upsert_scram("bob", 2, 8192, b"s3", b"\x03" * 64)
    assert [(m.name, i) for m, i in store.scram_users()["bob"]] == [("SCRAM-SHA-256", 16384), ("SCRAM-SHA-512", 8192)]
    store.delete_scram("bob", 1)
    assert store.scram_credential("bob", "SCRAM-SHA-256") is None
    with pytest.raises(CredentialError) as info:
        store.delete_scram("bob", "SCRAM-SHA-256")
    assert info.value.error == ErrorCode.RESOURCE_NOT_FOUND
    assert info.value.message == "Attempt to delete a user credential that does not exist"
    assert store.validate_scram_deletion("", 1).error == ErrorCode.UNACCEPTABLE_CREDENTIAL  # type: ignore[union-attr]


def test_listener_stores_share_scram_but_not_plain_users(store: CredentialStore) -> None:
    other = store.for_listener('org.apache.kafka.common.security.plain.PlainLoginModule required user_zed="z";')
    assert other.plain_users() == ["zed"] and store.plain_users() == ["admin", "alice"]
    other.upsert_scram("dave", 1, 4096, b"salt", b"\x00" * 32)
    assert store.scram_credential("dave", "SCRAM-SHA-256") is not None
    assert store.for_listener(None).plain_users() == []


def test_plain_users_come_only_from_a_plain_login_module() -> None:
    store = CredentialStore()
    store.set_plain_users_from_jaas('org.apache.kafka.common.security.scram.ScramLoginModule required '
                                    'user_alice="secret";')
    assert store.plain_password("alice") is None
    with pytest.raises(JaasConfigError, match="contains 2 login modules, should be 1 module"):
        store.set_plain_users_from_jaas(PLAIN_JAAS + " " + PLAIN_JAAS)


@pytest.mark.parametrize("argument", [
    "SCRAM-SHA-256=[name=alice,password=alice-secret]",
    "SCRAM-SHA-512=[name=alice,iterations=8192,password=alice-secret]",
    ' SCRAM-SHA-256=[name="alice",password="alice-secret"] ',
    "SCRAM-SHA-256=[name=alice,salt=TkFDbA==,password=alice-secret]",
])
def test_add_scram_arguments_seed_working_credentials(argument: str) -> None:
    seed = parse_add_scram(argument)
    store = CredentialStore()
    store.put_scram(seed.user, seed.mechanism, seed.credential)
    mechanism = seed.mechanism.name
    scram_exchange(new_sasl_server(mechanism, store), ScramClient("alice", "alice-secret", mechanism))


def test_add_scram_with_a_salted_password() -> None:
    salted = ScramClient("u", "pw", "SCRAM-SHA-256")
    salted.create_salted_password(b"NaCl", 4096)
    seed = parse_add_scram("SCRAM-SHA-256=[name=alice,iterations=4096,salt=TmFDbA,"
                           f"saltedpassword={base64.b64encode(salted.salted_password).decode()}]")
    assert seed.credential == scram_from_password("pw", "SCRAM-SHA-256", 4096, b"NaCl")


@pytest.mark.parametrize(("argument", "message"), [
    ("alice", "Failed to find equals sign in SCRAM argument 'alice'"),
    ("SCRAM-SHA-1=[name=a,password=b]", "The add-scram mechanism SCRAM-SHA-1 is not supported."),
    ("SCRAM-SHA-256=name=a,password=b]", "Expected configuration string to start with ["),
    ("SCRAM-SHA-256=[name=a,password=b", "Expected configuration string to end with ]"),
    ("SCRAM-SHA-256=[password=b]", "You must supply 'name' to add-scram"),
    ("SCRAM-SHA-256=[name=a]", "You must supply one of 'password' or 'saltedpassword' to add-scram"),
    ("SCRAM-SHA-256=[name=a,saltedpassword=AAAA]", "You must supply 'salt' with 'saltedpassword' to add-scram"),
    ("SCRAM-SHA-256=[name=a,salt=A-B=,password=b]", "Failed to decode given salt: A-B="),
    ("SCRAM-SHA-256=[name=a,iterations=many,password=b]", "Failed to parse iterations count: many"),
    ("SCRAM-SHA-256=[name=a,password=b,colour=red,age=3]", "Unknown SCRAM configurations: age, colour"),
    ("SCRAM-SHA-256=[name=a,password]", "No equals sign found in SCRAM component: password"),
    ("SCRAM-SHA-256=[name=a,iterations=4000,password=b]",
     "The 'iterations' value must be >= 4096 for add-scram using SCRAM_SHA_256"),
    ("SCRAM-SHA-512=[name=a,iterations=20000,password=b]",
     "The 'iterations' value must be <= 16384 for add-scram using SCRAM_SHA_512"),
])
def test_add_scram_refusals_use_kafkas_messages(argument: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_add_scram(argument)
    assert str(info.value) == message


def test_credential_string_round_trip() -> None:
    credential = scram_from_password("pw", "SCRAM-SHA-256", 4096, b"salt")
    text = credential_to_string(credential)
    assert text.startswith("salt=c2FsdA==,stored_key=") and text.endswith(",iterations=4096")
    assert credential_from_string(text) == credential
    with pytest.raises(ValueError, match="Credentials not valid"):
        credential_from_string("salt=c2FsdA==,iterations=4096")


# --- OAUTHBEARER ---------------------------------------------------------------------------------

def b64url(data: dict[str, Any] | bytes) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unsecured_jws(claims: dict[str, Any] | None = None, header: dict[str, Any] | None = None,
                  signature: str = "") -> str:
    """An unsecured JWS as Kafka's OAuthBearerUnsecuredLoginCallbackHandler builds one."""
    payload = {"sub": "alice", "iat": NOW_MS / 1000 - 60, "exp": NOW_MS / 1000 + 3600} if claims is None else claims
    return f"{b64url(header or {'alg': 'none'})}.{b64url(payload)}.{signature}"


class Tokens(AbstractTokenProvider):
    def __init__(self, token: str, extensions: dict[str, str] | None = None) -> None:
        self._token = token
        self._extensions = extensions or {}

    def token(self) -> str:
        return self._token

    def extensions(self) -> dict[str, str]:
        return self._extensions


def oauth_server(options: dict[str, str] | None = None, now_ms: int = NOW_MS) -> SaslServer:
    return new_sasl_server("OAUTHBEARER", CredentialStore(),
                           SaslServerConfig(oauthbearer_options=options or {}, clock=ManualClock(now_ms)))


def test_oauthbearer_kafka_python_client_authenticates_with_extensions() -> None:
    client = SaslMechanismOAuth(sasl_oauth_token_provider=Tokens(unsecured_jws(), {"traceId": "abc", "n": "1"}))
    server = oauth_server()
    client.receive(server.evaluate(client.auth_bytes()))
    assert client.is_authenticated() and server.complete and server.authorization_id == "alice"
    assert server.credential_expiry_ms == NOW_MS + 3_600_000
    assert isinstance(server, OAuthBearerSaslServer) and server.extensions == {"traceId": "abc", "n": "1"}


def test_oauthbearer_aiokafka_client_message_is_accepted() -> None:
    client = OAuthAuthenticator(sasl_oauth_token_provider=None)
    token = client._build_oauth_client_request(unsecured_jws({"sub": "svc", "exp": NOW_MS / 1000 + 1}), "")
    server = oauth_server()
    assert server.evaluate(token.encode()) == b"" and server.authorization_id == "svc"


def refused_token(token: str, options: dict[str, str] | None = None, now_ms: int = NOW_MS,
                  expected: bytes = b'{"status":"invalid_token"}') -> None:
    """The token is answered with the JSON error; kafka-python's client replies \\x01 and the exchange fails."""
    client = SaslMechanismOAuth(sasl_oauth_token_provider=Tokens(token))
    server = oauth_server(options, now_ms)
    challenge = server.evaluate(client.auth_bytes())
    assert challenge == expected and not server.complete and not server.failed
    client.receive(challenge)
    assert client.auth_bytes() == b"\x01"
    error = refused(server, client.auth_bytes())
    assert error.message == expected.decode()


def test_oauthbearer_expired_token_is_refused_after_the_clients_acknowledgement() -> None:
    refused_token(unsecured_jws({"sub": "alice", "exp": NOW_MS / 1000}))  # expiring now is expired
    refused_token(unsecured_jws({"sub": "alice", "exp": NOW_MS / 1000 - 1}))


def test_oauthbearer_clock_skew_option() -> None:
    token = unsecured_jws({"sub": "alice", "exp": NOW_MS / 1000 - 1})
    assert oauth_server({"unsecuredValidatorAllowableClockSkewMs": "2000"}).evaluate(
        f"n,,\x01auth=Bearer {token}\x01\x01".encode()) == b""
    refused_token(token, {"unsecuredValidatorAllowableClockSkewMs": "1000"})


@pytest.mark.parametrize("token", [
    unsecured_jws(header={"alg": "HS256"}),
    unsecured_jws(header={"alg": None}),
    unsecured_jws({"exp": NOW_MS / 1000 + 60}),  # no sub
    unsecured_jws({"sub": "  ", "exp": NOW_MS / 1000 + 60}),
    unsecured_jws({"sub": 42, "exp": NOW_MS / 1000 + 60}),
    unsecured_jws({"sub": "alice"}),  # no exp
    unsecured_jws({"sub": "alice", "exp": "tomorrow"}),
    unsecured_jws({"sub": "alice", "exp": NOW_MS / 1000 + 60, "iat": NOW_MS / 1000 + 30}),  # issued in the future
    unsecured_jws({"sub": "alice", "exp": NOW_MS / 1000 + 60, "scope": 7}),
    unsecured_jws(signature="c2lnbmF0dXJl"),
    unsecured_jws().rsplit(".", 1)[0],  # two parts
    unsecured_jws() + ".extra",
    "a..b",
    f"{b64url({'alg': 'none'})}.bm90IGpzb24.",  # "not json"
    f"{b64url({'alg': 'none'})}.e30-.",  # '-' is not in the alphabet Kafka decodes with
    f"{b64url({'alg': 'none'})}.eyJzdWIiOiJhIn0x.",  # bad length
    f"{b64url({'alg': 'none'})}.{b64url(b'[1,2]')}.",  # not an object: no claims at all
    "a+b/c~d==",  # RFC 6750's token characters pass the client message's grammar, then fail as a JWS
])
def test_oauthbearer_invalid_tokens(token: str) -> None:
    refused_token(token)


def test_oauthbearer_required_scope() -> None:
    options = {"unsecuredValidatorRequiredScope": "LOGIN_TO_KAFKA  KAFKA_BROKER"}
    both = {"sub": "alice", "exp": NOW_MS / 1000 + 60, "scope": ["LOGIN_TO_KAFKA", " KAFKA_BROKER "]}
    server = oauth_server(options)
    server.evaluate(f"n,,\x01auth=Bearer {unsecured_jws(both)}\x01\x01".encode())
    assert server.complete
    refused_token(unsecured_jws({"sub": "alice", "exp": NOW_MS / 1000 + 60, "scope": "LOGIN_TO_KAFKA"}), options,
                  expected=b'{"status":"insufficient_scope", "scope":"[LOGIN_TO_KAFKA, KAFKA_BROKER]"}')


def test_oauthbearer_principal_claim_option() -> None:
    server = oauth_server({"unsecuredValidatorPrincipalClaimName": " client_id "})
    server.evaluate(f"n,,\x01auth=Bearer {unsecured_jws({'client_id': 'svc', 'exp': NOW_MS / 1000 + 9})}\x01\x01"
                    .encode())
    assert server.authorization_id == "svc"


def test_oauthbearer_json_values_become_text_as_jackson_asText_makes_them() -> None:
    jws = parse_unsecured_jws(unsecured_jws({"sub": True, "exp": 10**400, "scope": ["a", 1, None]}))
    assert jws.principal_name == "true" and jws.lifetime_ms == 2**63 - 1 and jws.scope == {"a", "1", "null"}


def test_oauthbearer_a_new_token_after_a_refusal_starts_over() -> None:
    server = oauth_server()
    expired = unsecured_jws({"sub": "alice", "exp": 1})
    assert server.evaluate(f"n,,\x01auth=Bearer {expired}\x01\x01".encode()).startswith(b'{"status"')
    assert server.evaluate(f"n,,\x01auth=Bearer {unsecured_jws()}\x01\x01".encode()) == b""
    assert server.authorization_id == "alice"


@pytest.mark.parametrize(("message", "reason"), [
    (b"\x01", "Invalid OAUTHBEARER client first message"),  # an acknowledgement with nothing refused
    (b"", "Invalid OAUTHBEARER client first message"),
    (b"n,,auth=Bearer abc", "Invalid OAUTHBEARER client first message"),
    (b"n,,\x01auth=Bearer abc\x01", "Invalid OAUTHBEARER client first message"),
    (b"n,,\x01\x01", "Invalid OAUTHBEARER client first message: 'auth' not specified"),
    (b"n,,\x01host=x\x01\x01", "Invalid OAUTHBEARER client first message: 'auth' not specified"),
    (b"n,,\x01auth=Bearer\x01\x01", "Invalid OAUTHBEARER client first message: invalid 'auth' format"),
    (b"n,,\x01auth=Bearer a!b\x01\x01", "Invalid OAUTHBEARER client first message: invalid 'auth' format"),
    (b"n,,\x01auth=Bearer a=b\x01\x01", "Invalid OAUTHBEARER client first message: invalid 'auth' format"),
    (b"n,,\x011x=y\x01auth=Bearer abc\x01\x01", "Invalid OAUTHBEARER client first message"),
])
def test_oauthbearer_malformed_client_messages_get_the_generic_message(message: bytes, reason: str) -> None:
    error = refused(oauth_server(), message)
    assert error.message == generic("OAUTHBEARER") and error.reason == reason


def test_oauthbearer_failures_kafka_answers_by_closing() -> None:
    with pytest.raises(SaslFatalError, match="Invalid scheme"):
        oauth_server().evaluate(f"n,,\x01auth=Basic {unsecured_jws()}\x01\x01".encode())
    no_alg = f"{b64url({'typ': 'JWT'})}.{b64url({'sub': 'a', 'exp': 9e9})}."
    with pytest.raises(SaslFatalError, match="Algorithm"):
        oauth_server().evaluate(f"n,,\x01auth=Bearer {no_alg}\x01\x01".encode())


def test_oauthbearer_scheme_is_case_insensitive_and_authzid_must_match() -> None:
    assert oauth_server().evaluate(f"n,a=alice,\x01auth=BEARER {unsecured_jws()}\x01\x01".encode()) == b""
    error = refused(oauth_server(), f"n,a=bob,\x01auth=Bearer {unsecured_jws()}\x01\x01".encode())
    assert error.message == ("Authentication failed: Client requested an authorization id (bob) that is different "
                             "from the token's principal name (alice)")


@pytest.mark.parametrize(("options", "message"), [
    ({"unsecuredValidatorAllowableClockSkewMs": "-1"}, "Allowable clock skew millis must not be negative: -1"),
    ({"unsecuredValidatorAllowableClockSkewMs": "1s"}, 'For input string: "1s"'),
    ({"unsecuredValidatorRequiredScope": 'a "b"'}, 'Invalid scope value: "b"'),
])
def test_oauthbearer_validator_options_kafka_refuses(options: dict[str, str], message: str) -> None:
    with pytest.raises(OAuthBearerConfigError) as info:
        UnsecuredValidatorOptions.from_jaas_options(options)
    assert str(info.value) == message
    with pytest.raises(OAuthBearerConfigError):
        oauth_server(options)


def test_oauthbearer_options_from_the_listeners_jaas_text() -> None:
    entry = load_server_jaas('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
                             'unsecuredLoginStringClaim_sub="admin" unsecuredValidatorRequiredScope="kafka";')
    assert UnsecuredValidatorOptions.from_jaas_options(entry.options).required_scope == ("kafka",)


# --- JAAS ----------------------------------------------------------------------------------------

def test_jaas_the_brief_example() -> None:
    entry = load_server_jaas(PLAIN_JAAS)
    assert entry == JaasEntry("org.apache.kafka.common.security.plain.PlainLoginModule", "REQUIRED",
                              {"username": "admin", "password": "x", "user_admin": "x", "user_alice": "secret"})


@pytest.mark.parametrize(("text", "options"), [
    ('m required a="x\\"y";', {"a": 'x"y'}),
    ('m required a="\\\\d\\ttab\\101";', {"a": "\\d\ttabA"}),
    ("m required a=plain b=two_2.x-y$;", {"a": "plain", "b": "two_2.x-y$"}),
    ("m required a='single' b=\"dou'ble\";", {"a": "single", "b": "dou'ble"}),
    ('m required\n  a = "spaced"\n  b="multi word";', {"a": "spaced", "b": "multi word"}),
    ('m required a="x" /* note */ b="y";', {"a": "x", "b": "y"}),
    ('m required a="x" // rest of line\n b="y";', {"a": "x", "b": "y"}),
    ('m required a="semi;colon=";', {"a": "semi;colon="}),
    ("m required a=x;", {"a": "x"}),
    ('m required "quoted key"="v";', {"quoted key": "v"}),
    ('m required a="1" a="2";', {"a": "2"}),
    ("m required;", {}),
    ('m Sufficient a="1";', {"a": "1"}),
])
def test_jaas_values(text: str, options: dict[str, str]) -> None:
    [entry] = parse_jaas_config(text)
    assert entry.login_module == "m" and dict(entry.options) == options


@pytest.mark.parametrize(("text", "message"), [
    ("", "Login module not specified in JAAS config"),
    ("   /* only a comment */ ", "Login module not specified in JAAS config"),
    ("m", "Login module control flag not specified in JAAS config"),
    ("m ;", "Login module control flag is not available in the JAAS config"),
    ("m mandatory a=b;", "Invalid login module control flag 'mandatory' in JAAS config"),
    ('m required user_alice="secret"', "JAAS config entry not terminated by semi-colon"),
    ("m required a;", "Value not specified for key 'a' in JAAS config"),
    ("m required a=;", "Value not specified for key 'a' in JAAS config"),
    ("m required a=/tmp/x;", "Value not specified for key 'a' in JAAS config"),  # '/' starts a comment
    ("m required a=x y=;", "Value not specified for key 'y' in JAAS config"),
    ("m required a=1;", "Value not specified for key 'a' in JAAS config"),  # a number: it has no text
    ("m required a=-x;", "Value not specified for key 'a' in JAAS config"),
    ("m required a=p@ss;", "Value not specified for key 'null' in JAAS config"),  # '@' is a token of its own
    ("m required 2a=x;", "Value not specified for key 'null' in JAAS config"),
    ("m required a='it''s';", "Value not specified for key 's' in JAAS config"),  # two quoted strings
    ('m required a="unterminated;', "JAAS config entry not terminated by semi-colon"),
])
def test_jaas_errors_use_kafkas_messages(text: str, message: str) -> None:
    with pytest.raises(JaasConfigError) as info:
        parse_jaas_config(text)
    assert str(info.value) == message


def test_jaas_several_modules_and_the_one_module_rule() -> None:
    entries = parse_jaas_config('a required x="1"; b optional y="2";')
    assert [(e.login_module, e.control_flag) for e in entries] == [("a", "REQUIRED"), ("b", "OPTIONAL")]
    with pytest.raises(JaasConfigError, match="^JAAS config property contains 2 login modules, should be 1 module$"):
        load_server_jaas("a required x=one; b optional y=two;")


# --- the same inputs through Kafka's own classes (java and the Kafka client jars) -----------------

ORACLE_SOURCE = r"""
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import javax.security.auth.callback.*;
import javax.security.auth.login.AppConfigurationEntry;
import javax.security.auth.login.Configuration;
import javax.security.sasl.*;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.security.plain.internals.PlainSaslServer;
import org.apache.kafka.common.security.plain.internals.PlainServerCallbackHandler;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.ScramCredentialCallback;
import org.apache.kafka.common.security.scram.ScramExtensionsCallback;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramMessages;
import org.apache.kafka.common.security.scram.internals.ScramSaslClient;
import org.apache.kafka.common.security.scram.internals.ScramSaslServer;
import org.apache.kafka.common.security.token.delegation.internals.DelegationTokenCredentialCallback;

/** Reads one command per line (arguments in base64), answers one line: Kafka's own classes as an oracle. */
public class SaslOracle {
    static final Map<String, SaslServer> servers = new HashMap<>();
    static final Map<String, Map<String, ScramCredential>> credentials = new HashMap<>();
    static final Map<String, SaslClient> clients = new HashMap<>();

    static byte[] b(String b64) { return Base64.getDecoder().decode(b64); }
    static String s(String b64) { return new String(b(b64), StandardCharsets.UTF_8); }
    static String e(byte[] bytes) { return Base64.getEncoder().encodeToString(bytes == null ? new byte[0] : bytes); }
    static String e(String text) { return e(text.getBytes(StandardCharsets.UTF_8)); }

    static List<AppConfigurationEntry> jaas(String text) throws Throwable {
        Class<?> c = Class.forName("org.apache.kafka.common.security.JaasConfig");
        java.lang.reflect.Constructor<?> ctor = c.getDeclaredConstructor(String.class, String.class);
        ctor.setAccessible(true);
        try {
            return Arrays.asList(((Configuration) ctor.newInstance("ctx", text)).getAppConfigurationEntry("ctx"));
        } catch (java.lang.reflect.InvocationTargetException ite) {
            throw ite.getCause();
        }
    }

    static String failure(Throwable t) {
        String kind = t instanceof SaslAuthenticationException ? "auth" : t instanceof SaslException ? "sasl" : "other";
        return "err " + kind + " " + e(t.getClass().getSimpleName()) + " " + e(String.valueOf(t.getMessage()));
    }

    static String handle(String[] w) throws Throwable {
        switch (w[0]) {
            case "jaas": {
                StringBuilder out = new StringBuilder();
                for (AppConfigurationEntry entry : jaas(s(w[1]))) {
                    String flag = entry.getControlFlag().toString();
                    out.append(e(entry.getLoginModuleName())).append(',')
                       .append(e(flag.substring(flag.indexOf(':') + 2).toUpperCase(Locale.ROOT)));
                    Map<String, String> sorted = new TreeMap<>();
                    for (Map.Entry<String, ?> option : entry.getOptions().entrySet())
                        sorted.put(String.valueOf(option.getKey()), (String) option.getValue());
                    for (Map.Entry<String, String> option : sorted.entrySet())
                        out.append(',').append(e(option.getKey())).append(',').append(e(option.getValue()));
                    out.append(';');
                }
                return "ok " + out;
            }
            case "plain": {
                PlainServerCallbackHandler handler = new PlainServerCallbackHandler();
                handler.configure(Collections.emptyMap(), "PLAIN", jaas(s(w[2])));
                servers.put(w[1], new PlainSaslServer(handler));
                return "ok";
            }
            case "scram": {
                Map<String, ScramCredential> users = new HashMap<>();
                credentials.put(w[1], users);
                servers.put(w[1], new ScramSaslServer(ScramMechanism.forMechanismName(w[2]), Collections.emptyMap(),
                    callbacks -> {
                        String name = null;
                        for (Callback callback : callbacks) {
                            if (callback instanceof NameCallback) name = ((NameCallback) callback).getDefaultName();
                            else if (callback instanceof DelegationTokenCredentialCallback) { }
                            else if (callback instanceof ScramCredentialCallback)
                                ((ScramCredentialCallback) callback).scramCredential(users.get(name));
                        }
                    }));
                return "ok";
            }
            case "cred":
                credentials.get(w[1]).put(s(w[2]),
                    new ScramCredential(b(w[3]), b(w[4]), b(w[5]), Integer.parseInt(w[6])));
                return "ok";
            case "eval": {
                SaslServer server = servers.get(w[1]);
                try {
                    byte[] answer = server.evaluateResponse(b(w[2]));
                    return "ok " + e(answer) + " " + server.isComplete() + " "
                        + (server.isComplete() ? e(server.getAuthorizationID()) : "-");
                } catch (Throwable t) {
                    return failure(t);
                }
            }
            case "client": {
                String user = s(w[3]), password = s(w[4]), extensions = s(w[5]);
                clients.put(w[1], new ScramSaslClient(ScramMechanism.forMechanismName(w[2]), callbacks -> {
                    for (Callback callback : callbacks) {
                        if (callback instanceof NameCallback) ((NameCallback) callback).setName(user);
                        else if (callback instanceof PasswordCallback)
                            ((PasswordCallback) callback).setPassword(password.toCharArray());
                        else if (callback instanceof ScramExtensionsCallback) {
                            Map<String, String> map = new HashMap<>();
                            for (String pair : extensions.split(","))
                                if (!pair.isEmpty()) map.put(pair.split("=", 2)[0], pair.split("=", 2)[1]);
                            ((ScramExtensionsCallback) callback).extensions(map);
                        } else throw new UnsupportedCallbackException(callback);
                    }
                }));
                return "ok";
            }
            case "ceval": {
                SaslClient client = clients.get(w[1]);
                try {
                    return "ok " + e(client.evaluateChallenge(b(w[2]))) + " " + client.isComplete();
                } catch (Throwable t) {
                    return failure(t);
                }
            }
            case "bare":
                return "ok " + e(new ScramMessages.ClientFirstMessage(b(w[1])).clientFirstMessageBare());
            case "salt": {  // the order of this JVM's Map.copyOf maps (needs --add-opens java.base/java.util)
                java.lang.reflect.Field salt =
                    Class.forName("java.util.ImmutableCollections").getDeclaredField("SALT32L");
                salt.setAccessible(true);
                return "ok " + salt.getLong(null);
            }
            default:
                return "err other " + e("Unknown") + " " + e(w[0]);
        }
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        for (String line; (line = in.readLine()) != null; ) {
            String answer;
            try {
                answer = handle((line + " ").split(" ", -1));
            } catch (Throwable t) {
                answer = failure(t);
            }
            out.println(answer);
        }
    }
}
"""


def enc(data: str | bytes) -> str:
    return base64.b64encode(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data).decode()


def dec(text: str) -> str:
    return base64.b64decode(text).decode("utf-8", "surrogatepass")


class KafkaOracle:
    """One JVM running SaslOracle; `call` sends a command line and returns the answer's words."""

    def __init__(self, proc: subprocess.Popen[str], stderr: Path) -> None:
        self.proc = proc
        self.stderr = stderr

    def call(self, *words: str) -> list[str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(" ".join(words) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the oracle JVM died:\n{self.stderr.read_text()[-4000:]}"
        return line.rstrip("\n").split(" ")


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaOracle]:
    from tests.integration.clients import JAVA_CURRENT, JavaClients, java_classpath

    jars = os.pathsep.join(str(jar) for jar in java_classpath(JAVA_CURRENT))
    build = tmp_path_factory.mktemp("sasl-oracle")
    (build / "SaslOracle.java").write_text(ORACLE_SOURCE)
    subprocess.run(["javac", "-encoding", "UTF-8", "-cp", jars, "-d", str(build), str(build / "SaslOracle.java")],
                   check=True, capture_output=True, timeout=120)
    stderr = build / "stderr.txt"
    with stderr.open("w") as err:
        proc = subprocess.Popen(["java", *JavaClients.JVM_OPTS, "--add-opens", "java.base/java.util=ALL-UNNAMED",
                                 "-cp", os.pathsep.join([str(build), jars]),
                                 "SaslOracle"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                text=True, encoding="utf-8")
    try:
        yield KafkaOracle(proc, stderr)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def kafka_jaas(kafka: KafkaOracle, text: str) -> list[JaasEntry] | tuple[str, str]:
    answer = kafka.call("jaas", enc(text))
    if answer[0] == "err":
        return dec(answer[2]), dec(answer[3])
    entries = []
    for record in answer[1:2]:
        for fields in record.split(";")[:-1]:
            module, flag, *options = [dec(field) for field in fields.split(",")]
            entries.append(JaasEntry(module, flag, dict(zip(options[::2], options[1::2], strict=True))))
    return entries


JAAS_CORPUS = [
    PLAIN_JAAS,
    'm required a="x\\"y";', 'm required a="\\\\d\\ttab\\101\\477\\0x\\q";', "m required a=plain b=2;",
    "m required a='single' b=\"dou'ble\";", 'm required\n  a = "spaced"\r\n  b="multi word";',
    'm required a="x" /* note */ b="y";', 'm required a="x" // rest\n b="y";', 'm required a="x" / rest\n b="y";',
    'm required a="semi;colon=";', "m required a=x;", 'm required "quoted key"="v";', "m required a=1 a=2;",
    "m required;", 'm Sufficient a="1";', "m requisite a=b; n optional c=d;", "m required a=é€😀;",
    "", "   /* only a comment */ ", "m", "m ;", "m mandatory a=b;", 'm required user_alice="secret"',
    "m required a;", "m required a=;", "m required a=/tmp/x;", "m required a=x y=;", "m required a='it''s';",
    'm required a="unterminated;', 'm required a="line\nbreak";', 'm required a="trailing\\', "m required a==b;",
    "m required \x81=x;", "m required a=\x81;", "m required a=b /* unterminated", "m required a=b */ c=d;",
    "m required a=b/*x*\n/c=d;*/;", "; required a=b;", '"" required a=b;', "m\trequired\ta=b\t;",
    "m required a=\"x\"b=\"y\";", "m required a=b;c", "a.b.C required k.e-y=v.a_l-u+e;",
]


@pytest.mark.java
@pytest.mark.parametrize("text", JAAS_CORPUS)
def test_jaas_parsing_as_kafka(kafka: KafkaOracle, text: str) -> None:
    expected = kafka_jaas(kafka, text)
    try:
        ours: list[JaasEntry] | str = parse_jaas_config(text)
    except JaasConfigError as e:
        ours = str(e)
    if isinstance(expected, tuple):
        kind, message = expected
        assert isinstance(ours, str), f"Kafka refuses it ({kind}: {message})"
        if message != "null":  # AppConfigurationEntry refuses an empty module name without a message
            assert ours == message
    else:
        assert [(e.login_module, e.control_flag, dict(e.options)) for e in ours] == [  # type: ignore[union-attr]
            (e.login_module, e.control_flag, dict(e.options)) for e in expected]


def outcome(server: SaslServer, token: bytes) -> tuple[str, ...]:
    """What a client would see, as the oracle reports Kafka's: ok / auth <message> / sasl <reason> / other."""
    try:
        answer = server.evaluate(token)
    except SaslAuthenticationError as e:
        if e.message == generic_failure_message(server.mechanism):
            return ("sasl", e.reason)
        return ("auth", e.message)
    except SaslFatalError:
        return ("other",)
    return ("ok", answer.decode("utf-8", "replace"), str(server.complete).lower(),
            server.authorization_id if server.complete else "-")


def kafka_outcome(kafka: KafkaOracle, server_id: str, token: bytes) -> tuple[str, ...]:
    answer = kafka.call("eval", server_id, enc(token))
    if answer[0] == "ok":
        return ("ok", base64.b64decode(answer[1]).decode("utf-8", "replace"), answer[2],
                "-" if answer[3] == "-" else dec(answer[3]))
    if answer[1] == "other":
        return ("other",)
    return (answer[1], dec(answer[3]))


PLAIN_CORPUS = [b"\x00alice\x00secret", b"alice\x00alice\x00secret", b"admin\x00alice\x00secret",
                b"admin\x00alice\x00wrong", b"\x00alice\x00wrong", b"\x00nobody\x00x", b"", b"\x00\x00secret",
                b"\x00alice\x00", b"alice\x00secret", b"\x00alice", b"\x00alice\x00secret\x00more",
                b"\x00alice\x00\xff\xfe", b"\x00user_alice\x00secret", b"\x00username\x00admin"]


@pytest.mark.java
@pytest.mark.parametrize("token", PLAIN_CORPUS)
def test_plain_as_kafka(kafka: KafkaOracle, store: CredentialStore, token: bytes) -> None:
    server_id = f"plain{PLAIN_CORPUS.index(token)}"
    assert kafka.call("plain", server_id, enc(PLAIN_JAAS)) == ["ok"]
    assert outcome(PlainSaslServer(store), token) == kafka_outcome(kafka, server_id, token)


def kafka_scram_server(kafka: KafkaOracle, server_id: str, mechanism: str, store: CredentialStore) -> None:
    assert kafka.call("scram", server_id, mechanism) == ["ok"]
    for user, mech, credential in store:
        if mech == mechanism:
            assert kafka.call("cred", server_id, enc(user), enc(credential.salt), enc(credential.stored_key),
                              enc(credential.server_key), str(credential.iterations)) == ["ok"]


def scram_store() -> CredentialStore:
    store = CredentialStore()
    for mechanism in SCRAM:
        store.put_scram("alice", mechanism, scram_from_password("alice-secret", mechanism, 4096, b"salt"))
        store.put_scram("a,b=c", mechanism, scram_from_password("pw", mechanism, 8192))
        store.put_scram("weak", mechanism, credential_from_salted_password(mechanism, b"s", b"\x01" * 64, 100))
    return store


def same_server_first(ours: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Equal outcomes, the server nonce (random on both sides) aside."""
    if ours[0] != "ok" or theirs[0] != "ok":
        return ours == theirs
    strip = re.compile(r"^(r=[^,]*?)[0-9a-z]+(,s=.*)$")
    return strip.sub(r"\1\2", ours[1]) == strip.sub(r"\1\2", theirs[1]) and ours[2:] == theirs[2:]


SCRAM_FIRST_CORPUS = [
    b"n,,n=alice,r=abc", b"n,a=alice,n=alice,r=abc", b"n,a=bob,n=alice,r=abc", b"n,a=bob,n=nobody,r=abc",
    b"n,,n=nobody,r=abc", b"n,,n=a=2Cb=3Dc,r=x", b"n,,n=a,b=c,r=x", b"n,,n=weak,r=abc",
    b"n,,n=alice,r=abc,tokenauth=true", b"n,,n=alice,r=abc,tokenauth=TRUE", b"n,,n=alice,r=abc,tokenauth=1",
    b"n,,n=alice,r=abc,b=1,a=2", b"n,,m=ext,n=alice,r=abc", b"n,,n=alice,r=abc,ext=v=w", b"n,,n=alice,r=abc,",
    b"", b"n,,", b"y,,n=alice,r=abc", b"p=tls-unique,,n=alice,r=abc", b"n,,n=alice", b"n,,r=abc,n=alice",
    b"n,,n=alice,r=", b"n,,n=al=ice,r=abc", b"n,,n=\xc3\xa9,r=abc", b"n,,n=alice,r=ab c", b"n,,n=alice,r=abc,1x=y",
    b"\x00\x01\x02", b"n,,n=alice,r=abc\xff", b"n,,n=alice=2C,r=abc", b"n,a=a=2Cb=3Dc,n=a=2Cb=3Dc,r=x",
]


@pytest.mark.java
@pytest.mark.parametrize("mechanism", SCRAM)
@pytest.mark.parametrize("token", SCRAM_FIRST_CORPUS)
def test_scram_client_first_as_kafka(kafka: KafkaOracle, mechanism: str, token: bytes) -> None:
    store = scram_store()
    server_id = f"{mechanism}-first-{SCRAM_FIRST_CORPUS.index(token)}"
    kafka_scram_server(kafka, server_id, mechanism, store)
    ours, theirs = outcome(new_sasl_server(mechanism, store), token), kafka_outcome(kafka, server_id, token)
    assert same_server_first(ours, theirs), (ours, theirs)


FINAL_VARIANTS = ("valid", "wrong password", "nonce", "empty", "no nonce", "no proof", "bad base64", "unpadded",
                  "short proof", "empty proof", "long proof", "other channel binding", "extension", "order", "extra")


def final_variant(name: str, client: ScramClient, wrong: ScramClient) -> bytes:
    final = client.final_message()
    nonce = client.nonce
    proof = final.rsplit(b",p=", 1)[1]
    return {
        "valid": final,
        "wrong password": wrong.final_message(),
        "nonce": final.replace(nonce, nonce + b"x"),
        "empty": b"",
        "no nonce": b"c=biws",
        "no proof": b"c=biws,r=" + nonce,
        "bad base64": b"c=biws,r=" + nonce + b",p=@@@@",
        "unpadded": b"c=biws,r=" + nonce + b",p=abc",
        "short proof": b"c=biws,r=" + nonce + b",p=AAAA",
        "empty proof": b"c=biws,r=" + nonce + b",p=",
        "long proof": b"c=biws,r=" + nonce + b",p=" + base64.b64encode(b"\x00" * 100),
        "other channel binding": final.replace(b"c=biws", b"c=eCws"),
        "extension": b"c=biws,r=" + nonce + b",ext=1,p=" + proof,
        "order": b"r=" + nonce + b",c=biws,p=" + proof,
        "extra": final + b",x=y",
    }[name]


@pytest.mark.java
@pytest.mark.parametrize("mechanism", SCRAM)
def test_scram_client_final_as_kafka(kafka: KafkaOracle, mechanism: str) -> None:
    store = scram_store()
    for index, name in enumerate(FINAL_VARIANTS):
        ours_server = new_sasl_server(mechanism, store)
        server_id = f"{mechanism}-final-{index}"
        kafka_scram_server(kafka, server_id, mechanism, store)
        outcomes = []
        for server in (ours_server, server_id):
            client, wrong = ScramClient("alice", "alice-secret", mechanism), ScramClient("alice", "x", mechanism)
            client.nonce = wrong.nonce = b"clientnonce"
            first = b"n,,n=alice,r=clientnonce"
            client.auth_message = wrong.auth_message = first[3:]
            first_outcome = (outcome(server, first) if isinstance(server, SaslServer)
                             else kafka_outcome(kafka, server, first))
            assert first_outcome[0] == "ok"
            for c in (client, wrong):
                c.process_server_first_message(first_outcome[1].encode())
            token = final_variant(name, client, wrong)
            result = outcome(server, token) if isinstance(server, SaslServer) else kafka_outcome(kafka, server, token)
            if result[0] == "ok":  # the server signature differs with the nonce: check it, then drop it
                client.process_server_final_message(result[1].encode())
                result = result[:1] + result[2:]
            # Kafka's format error quotes the message, which holds this server's nonce and the proof for it
            outcomes.append(tuple(part.replace(token.decode(), "<token>").replace(client.nonce.decode(), "<nonce>")
                                  for part in result))
        assert outcomes[0] == outcomes[1], name


def java_client_exchange(kafka: KafkaOracle, client_id: str,
                         evaluate: Callable[[bytes], tuple[str, ...]]) -> tuple[str, ...]:
    """Kafka's ScramSaslClient `client_id` against a server's `evaluate`: ("ok", authorization id) once the client
    checked the server signature, else the server's refusal."""
    challenge, authorization_id = b"", "-"
    for _ in range(3):
        answer = kafka.call("ceval", client_id, enc(challenge))
        assert answer[0] == "ok", [dec(w) for w in answer[2:]]
        if answer[2] == "true":
            return ("ok", authorization_id)
        result = evaluate(base64.b64decode(answer[1]))
        if result[0] != "ok":
            return result
        challenge, authorization_id = result[1].encode(), result[3]
    raise AssertionError("the exchange did not end")


@pytest.mark.java
@pytest.mark.parametrize("mechanism", SCRAM)
@pytest.mark.parametrize(("user", "password", "extensions"), [
    ("alice", "alice-secret", ""), ("a,b=c", "pw", ""), ("alice", "alice-secret", "foo=bar,baz=1"),
    ("alice", "alice-secret", "k=v,a=b,zz=1,q=2"), ("alice", "alice-secret", "x=1,y=2,z=3"), ("alice", "wrong", ""),
])
def test_scram_kafka_java_client_against_our_server(kafka: KafkaOracle, mechanism: str, user: str, password: str,
                                                    extensions: str) -> None:
    """Kafka's ScramSaslClient gets the same outcome from our server as from Kafka's ScramSaslServer in its JVM.

    With two or more extensions that is not always success: the client lists them in its Map.copyOf order and
    Kafka's server rebuilds client-first-bare from a Map.copyOf of the map parsed from what it received, whose
    order can differ (keys in one HashMap bucket change places, and so can their MapN slots). Our server takes the
    oracle JVM's salt, as if it were that Kafka.
    """
    store, salt = scram_store(), int(kafka.call("salt")[1])
    outcomes = []
    for side in ("ours", "kafka"):
        client_id = f"client-{mechanism}-{user}-{password}-{extensions}-{side}".replace(" ", "")
        assert kafka.call("client", client_id, mechanism, enc(user), enc(password), enc(extensions)) == ["ok"]
        if side == "ours":
            evaluate = partial(outcome, ScramSaslServer(mechanism, store, extensions_salt=salt))
        else:
            kafka_scram_server(kafka, client_id, mechanism, store)
            evaluate = partial(kafka_outcome, kafka, client_id)
        outcomes.append(java_client_exchange(kafka, client_id, evaluate))
    assert outcomes[0] == outcomes[1], (salt, outcomes)
    if password == "wrong":
        assert outcomes[0] == ("sasl", "Invalid client credentials")
    elif extensions.count(",") < 1:
        assert outcomes[0] == ("ok", user)


@pytest.mark.java
@pytest.mark.parametrize("keys", [["b", "a"], ["zeta", "alpha"], ["k", "a", "zz", "q"],
                                  ["traceid", "tokenauth", "zz", "a", "Q"],
                                  ["one", "two", "three", "four", "five", "six", "seven"], ["x", "y", "z"],
                                  ["ab", "bc", "cd", "de", "ef", "fg"], [f"k{c}" for c in "abcdefghijklm"]])
def test_scram_extension_order_as_kafka(kafka: KafkaOracle, keys: list[str]) -> None:
    # Kafka 4.x's order depends on the oracle JVM's salt: ours is computed for the same salt
    message = "n,,n=alice,r=abc," + ",".join(f"{k}={i}" for i, k in enumerate(keys))
    answer = kafka.call("bare", enc(message))
    ours = kafka_extensions_order([(k, str(i)) for i, k in enumerate(keys)], int(kafka.call("salt")[1]))
    assert dec(answer[1]) == "n=alice,r=abc," + ",".join(f"{k}={v}" for k, v in ours.items())
