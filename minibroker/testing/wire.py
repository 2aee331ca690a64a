"""A blocking raw Kafka-protocol connection for tests: any request, any version, any bytes."""

from __future__ import annotations

import socket
import struct
from typing import Any

from ..client.security import ClientSecurity
from ..protocol.messages import REQUESTS, RESPONSES, SaslAuthenticateRequest, SaslHandshakeRequest


class WireClient:
    """One TCP connection that sends requests at chosen versions and reads raw or decoded responses."""

    def __init__(self, host: str, port: int, client_id: str = "minibroker-wire", timeout: float = 10.0,
                 security: ClientSecurity | None = None) -> None:
        """Connect; with `security`, over TLS and/or logged in with SASL as a Kafka client would be."""
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.client_id = client_id
        self._correlation_id = 0
        context = security.ssl_context() if security is not None else None
        if context is not None:
            self.sock = context.wrap_socket(self.sock, server_hostname=host)
        if security is not None and security.uses_sasl:
            self._authenticate(security)

    def _authenticate(self, security: ClientSecurity) -> None:
        """SaslHandshake v1, then SaslAuthenticate v2 until the mechanism is done; PermissionError if refused."""
        handshake = self.request(SaslHandshakeRequest(mechanism=security.mechanism), 1)
        if handshake.error_code:
            raise PermissionError(f"SASL mechanism {security.mechanism} refused; enabled: {handshake.mechanisms}")
        exchange = security.sasl_exchange()
        token: bytes | None = exchange.first()
        while token is not None:
            answer = self.request(SaslAuthenticateRequest(auth_bytes=token), 2)
            if answer.error_code:
                raise PermissionError(answer.error_message or f"SASL authentication failed ({answer.error_code})")
            token = exchange.respond(bytes(answer.auth_bytes))

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def encode_request(self, request: Any, version: int, correlation_id: int | None = None) -> bytes:
        """A full frame (size included) for `request` at `version`."""
        if correlation_id is None:
            self._correlation_id += 1
            correlation_id = self._correlation_id
        request_class = REQUESTS[request.API_KEY]
        client_id = self.client_id.encode()
        header = struct.pack(">hhih", request.API_KEY, version, correlation_id, len(client_id)) + client_id
        if request_class.flexible_version_q(version):
            header += b"\x00"
        body = bytes(request.encode(version=version))
        return struct.pack(">i", len(header) + len(body)) + header + body

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_frame(self) -> bytes:
        """The next response frame without its size; ConnectionError if the broker closed."""
        size = struct.unpack(">i", self._read_exactly(4))[0]
        return self._read_exactly(size)

    def _read_exactly(self, count: int) -> bytes:
        chunks = []
        while count:
            chunk = self.sock.recv(min(count, 1 << 20))
            if not chunk:
                raise ConnectionError("connection closed by the broker")
            chunks.append(chunk)
            count -= len(chunk)
        return b"".join(chunks)

    def is_closed_by_peer(self, timeout: float = 5.0) -> bool:
        """True when the broker closes the connection (reads EOF) within `timeout`."""
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            return False

    @staticmethod
    def decode_response(frame: bytes, api_key: int, version: int) -> tuple[int, Any]:
        """(correlation id, decoded response) of a response frame."""
        response_class = RESPONSES[api_key]
        correlation_id = struct.unpack_from(">i", frame, 0)[0]
        pos = 4
        if api_key != 18 and response_class.flexible_version_q(version):
            pos += 1  # empty header tagged fields
        return correlation_id, response_class.decode(frame[pos:], version=version)

    def request(self, request: Any, version: int) -> Any:
        """Send `request` at `version` and return the decoded response."""
        self.send_raw(self.encode_request(request, version))
        correlation_id, response = self.decode_response(self.read_frame(), request.API_KEY, version)
        if correlation_id != self._correlation_id:
            raise AssertionError(f"correlation id {correlation_id} != {self._correlation_id}")
        return response
