"""A connection's admission (server/admission.py) with plain bytes: connection-limit slots, the TLS principal, SASL."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from minibroker.apis.context import Session
from minibroker.core.clock import ManualClock
from minibroker.core.config import BrokerConfig
from minibroker.core.credentials import CredentialStore
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    RESPONSES,
    ApiVersionsRequest,
    MetadataRequest,
    SaslAuthenticateRequest,
    SaslHandshakeRequest,
)
from minibroker.server.admission import SESSION_EXPIRED, Admission, AuthAnswer, setup_failure
from minibroker.server.authenticator import SaslAuthenticator
from minibroker.server.connection import Closed, Connection
from minibroker.server.quotas import ConnectionQuotas
from minibroker.server.sasl.mechanism import SaslServerConfig
from minibroker.testing import certs

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="x" '
              'user_alice="secret";')
API_VERSIONS_ANSWER = b"\x00\x00\x00\x04versions"


def flexible(request_class: Any, version: int) -> bool:
    return bool(request_class.flexible_version_q(version))


def request_frame(request: Any, version: int, correlation_id: int = 7) -> memoryview:
    header = struct.pack(">hhih", request.API_KEY, version, correlation_id, 4) + b"test"
    if flexible(type(request), version):
        header += b"\x00"
    return memoryview(header + bytes(request.encode(version=version)))


def response(api_key: int, version: int, answer: Any) -> Any:
    """Decode an answer frame (size included) of `api_key` at `version`."""
    data = bytes(answer)
    size, _correlation_id = struct.unpack(">ii", data[:8])
    assert size == len(data) - 4
    body = data[9:] if flexible(RESPONSES[api_key], version) else data[8:]
    return RESPONSES[api_key].decode(body, version=version)


class Setup:
    def __init__(self, configs: dict[str, Any] | None = None, max_reauth_ms: int = 0, sasl: bool = True,
                 security_protocol: str | None = "SASL_PLAINTEXT") -> None:
        self.clock = ManualClock()
        self.config = BrokerConfig(configs or {})
        self.connection = Connection(self.config["socket.request.max.bytes"], self.clock.now_ms)
        self.session = Session()
        credentials = CredentialStore()
        credentials.set_plain_users_from_jaas(PLAIN_JAAS)
        authenticator = SaslAuthenticator(["PLAIN"], credentials, SaslServerConfig(clock=self.clock),
                                          self.clock.now_ms, max_reauth_ms, lambda _frame: API_VERSIONS_ANSWER)
        self.admission = Admission(self.connection, self.session, self.config, security_protocol=security_protocol,
                                   authenticator=authenticator if sasl else None, sasl_max_receive_size=1000)

    def handshake(self, version: int = 1) -> AuthAnswer:
        step = self.admission.receive(request_frame(SaslHandshakeRequest(mechanism="PLAIN"), version))
        assert isinstance(step, AuthAnswer) and step.close is None
        return step

    def authenticate(self, password: str, version: int = 2) -> AuthAnswer | Closed | None:
        token = b"\x00alice\x00" + password.encode()
        return self.admission.receive(request_frame(SaslAuthenticateRequest(auth_bytes=token), version))


def test_frames_are_bounded_by_the_sasl_receive_size_until_authenticated() -> None:
    setup = Setup({"socket.request.max.bytes": "5000"})
    assert setup.connection.max_frame_bytes == 1000
    setup.connection.receive_data(struct.pack(">i", 1001))
    event = setup.connection.next_event()
    assert isinstance(event, Closed) and "sasl.server.max.receive.size" in event.reason


def test_plain_exchange_sets_the_principal_and_lifts_the_frame_bound() -> None:
    setup = Setup({"socket.request.max.bytes": "5000"})
    versions = setup.admission.receive(request_frame(ApiVersionsRequest(), 0))
    assert versions == AuthAnswer(API_VERSIONS_ANSWER)
    handshake = response(17, 1, setup.handshake().answer)
    assert handshake.error_code == 0 and handshake.mechanisms == ["PLAIN"]
    done = setup.authenticate("secret")
    assert isinstance(done, AuthAnswer) and done.close is None
    assert response(36, 2, done.answer).error_code == 0
    assert setup.session.principal == "User:alice"
    assert setup.connection.max_frame_bytes == 5000
    # afterwards requests go to the APIs
    assert setup.admission.receive(request_frame(MetadataRequest(topics=[]), 12)) is None


def test_other_requests_before_authentication_close_without_an_answer() -> None:
    setup = Setup()
    step = setup.admission.receive(request_frame(MetadataRequest(topics=[]), 12))
    # connection.failed.authentication.delay.ms: Kafka's default 100
    assert step == AuthAnswer(None, "Unexpected Kafka request of type METADATA during SASL handshake.", 100)


@pytest.mark.parametrize("delay_ms", [0, 100])
def test_a_wrong_password_answers_the_failure_then_closes_after_the_configured_delay(delay_ms: int) -> None:
    setup = Setup({"connection.failed.authentication.delay.ms": str(delay_ms)})
    setup.handshake()
    step = setup.authenticate("wrong")
    assert isinstance(step, AuthAnswer) and step.delay_ms == delay_ms
    assert step.close is not None and step.close.startswith("Failed authentication: ")
    failed = response(36, 2, step.answer)
    assert failed.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert setup.session.principal == "User:ANONYMOUS"


def test_a_request_after_the_session_lifetime_closes_the_connection() -> None:
    setup = Setup(max_reauth_ms=1000)
    setup.handshake()
    assert isinstance(setup.authenticate("secret"), AuthAnswer)
    metadata = request_frame(MetadataRequest(topics=[]), 12)
    assert setup.admission.receive(metadata) is None
    setup.clock.advance(1001)
    assert setup.admission.receive(metadata) == Closed(SESSION_EXPIRED)


def test_reauthentication_goes_back_to_the_authenticator() -> None:
    setup = Setup(max_reauth_ms=1000)
    setup.handshake()
    assert isinstance(setup.authenticate("secret"), AuthAnswer)
    setup.clock.advance(900)
    setup.handshake()
    assert isinstance(setup.authenticate("secret"), AuthAnswer)
    setup.clock.advance(900)  # the new session runs from the re-authentication
    assert setup.admission.receive(request_frame(MetadataRequest(topics=[]), 12)) is None


def test_without_sasl_every_frame_goes_to_the_apis() -> None:
    setup = Setup(sasl=False, security_protocol=None)
    assert setup.admission.receive(request_frame(MetadataRequest(topics=[]), 12)) is None


@pytest.fixture(scope="module")
def alice_der(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    ca = certs.make_ca(tmp_path_factory.mktemp("pki"))
    return certs.make_client_certificate(ca, "alice").der


@pytest.mark.parametrize(("protocol", "principal"), [("SSL", "User:CN=alice"), (None, "User:CN=alice"),
                                                     ("SASL_SSL", "User:ANONYMOUS")])
def test_the_tls_principal_is_the_sessions_on_ssl_listeners_only(alice_der: bytes, protocol: str | None,
                                                                 principal: str) -> None:
    setup = Setup(sasl=False, security_protocol=protocol)
    assert setup.admission.tls_established(alice_der) is None
    assert setup.session.principal == principal


def test_a_certificate_the_mapping_rules_refuse_closes_the_connection(alice_der: bytes) -> None:
    setup = Setup(sasl=False, security_protocol="SSL")
    setup.admission.principal_mapping_rules = "RULE:^CN=bob$/bob/"
    refused = setup.admission.tls_established(alice_der)
    assert isinstance(refused, Closed) and setup.connection.closed
    assert setup.connection.closed_reason == refused.reason
    assert setup.session.principal == "User:ANONYMOUS"


def test_no_certificate_is_anonymous() -> None:
    setup = Setup(sasl=False, security_protocol="SSL")
    assert setup.admission.tls_established(None) is None
    assert setup.session.principal == "User:ANONYMOUS"


def test_the_connection_limit_slot_is_given_back_once() -> None:
    config = BrokerConfig({"max.connections.per.ip": "1"})
    quotas = ConnectionQuotas(config)
    assert quotas.admit("10.0.0.1") is None
    assert quotas.admit("10.0.0.1") is not None
    admission = Admission(Connection(1000, ManualClock().now_ms), Session(), config, quotas=quotas,
                          admitted_ip="10.0.0.1")
    admission.release()
    admission.release()  # the setup failed and the connection was lost: still one slot
    assert quotas.total == 0
    assert quotas.admit("10.0.0.1") is None


def test_setup_failures_worth_a_line() -> None:
    import ssl

    assert str(setup_failure(ssl.SSLError(1, "bad"))).startswith("SSL handshake failed: ")
    assert setup_failure(TimeoutError()) == "SSL handshake timed out"
    assert setup_failure(ConnectionResetError()) is None
