"""A blocking raw Kafka-protocol connection for tests: any request, any version, any bytes."""

from __future__ import annotations

import socket
import struct
from typing import Any

from ..protocol.messages import REQUESTS, RESPONSES


class WireClient:
    """One TCP connection that sends requests at chosen versions and reads raw or decoded responses."""

    def __init__(self, host: str, port: int, client_id: str = "minibroker-wire", timeout: float = 10.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.client_id = client_id
        self._correlation_id = 0

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
