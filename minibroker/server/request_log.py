"""The request log at DEBUG: one line per answered request (who asked what, how long it took, its error)."""

from __future__ import annotations

import logging
import struct
import time
from collections import deque

from ..apis.dispatch import Answer
from ..protocol.messages import RESPONSES, api_name

log = logging.getLogger("minibroker.connection")

_HEADER = struct.Struct(">hhih")  # api key, api version, correlation id, client id length
_API_VERSIONS = 18


def _first_error(value: object) -> int:
    """The first non-zero `error_code` in a decoded response: its own, then its fields' in order."""
    code = getattr(value, "error_code", 0)
    if code:
        return int(code)
    for name in getattr(type(value), "fields", ()):
        items = getattr(value, name)
        if isinstance(items, list):
            for item in items:
                code = _first_error(item)
                if code:
                    return code
    return 0


def error_code_of(api_key: int, api_version: int, data: bytes) -> int | str:
    """The error a response frame reports (see `_first_error`), "?" if it does not decode."""
    if api_key == _API_VERSIONS:
        # every version starts with the error code, and an unsupported version is answered at v0 (KIP-511)
        return int(struct.unpack_from(">h", data, 8)[0])
    try:
        response_class = RESPONSES[api_key]
        body = 9 if response_class.flexible_version_q(api_version) else 8  # size, correlation id, tagged fields
        return _first_error(response_class.decode(data[body:], version=api_version))
    except Exception:
        return "?"


class RequestLog:
    """The requests of one connection not yet answered, in order, each logged once its answer goes out."""

    def __init__(self, peer: str) -> None:
        self.peer = peer
        self.served = 0
        self._waiting: deque[tuple[float, int, int, int, str | None]] = deque()

    def request(self, frame: bytes | bytearray | memoryview) -> None:
        """A request is being handled: note when, and what it is."""
        received = time.perf_counter()
        if len(frame) < _HEADER.size:
            self._waiting.append((received, -1, -1, -1, None))  # the connection closes on it; never logged
            return
        api_key, api_version, correlation_id, client_len = _HEADER.unpack_from(frame, 0)
        client_id = None
        if client_len >= 0:
            client_id = bytes(frame[_HEADER.size : _HEADER.size + client_len]).decode("utf-8", "replace")
        self._waiting.append((received, api_key, api_version, correlation_id, client_id))

    def answered(self, data: Answer | None) -> None:
        """One line for the oldest request: who asked what, how long the answer took, the error it reports."""
        if not self._waiting:
            return
        received, api_key, api_version, correlation_id, client_id = self._waiting.popleft()
        self.served += 1
        latency_ms = (time.perf_counter() - received) * 1000
        if data is None:
            error: int | str = "none"
        else:
            error = error_code_of(api_key, api_version, data if isinstance(data, bytes) else b"".join(data))
        try:
            name = api_name(api_key)
        except KeyError:
            name = f"API_{api_key}"
        log.debug("request from %s client_id=%s api=%s v%d correlation_id=%d latency_ms=%.3f error_code=%s",
                  self.peer, client_id, name, api_version, correlation_id, latency_ms, error)
