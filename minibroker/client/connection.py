"""One TCP connection to a broker: requests are pipelined and answered in order."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections import deque
from typing import Any

from ..protocol.messages import REQUESTS, RESPONSES, SaslAuthenticateRequest, SaslHandshakeRequest
from .security import ClientSecurity

_SIZE = struct.Struct(">i")
API_VERSIONS_KEY = 18


class ConnectionClosed(ConnectionError):
    """The broker closed the connection (or it was closed) before answering."""


class AuthenticationFailed(ConnectionError):
    """The broker refused the SASL mechanism or the credentials."""


class BrokerConnection:
    """Sends requests at chosen versions; a reader task matches answers to them in order."""

    def __init__(self, host: str, port: int, client_id: str = "minibroker-client",
                 security: ClientSecurity | None = None) -> None:
        self.host = host
        self.port = port
        self.client_id = client_id
        self.security = security or ClientSecurity()
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._waiting: deque[tuple[int, int, int, asyncio.Future[Any]]] = deque()
        self._correlation_id = 0
        self._read_task: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        """Closed by either side, or its socket is already gone although the reader has not heard yet."""
        # asyncio closes a transport at once when a recv or send fails (a reset), and tells the reader only
        # on a later turn of the loop: a connection taken for open then takes requests that can never go
        return self._closed or (self._writer is not None and self._writer.is_closing())

    @property
    def in_flight(self) -> int:
        """Requests sent and not yet answered."""
        return len(self._waiting)

    async def connect(self) -> None:
        """Open the connection (TLS for SSL and SASL_SSL) and authenticate on SASL ones."""
        context = self.security.ssl_context()
        self._reader, self._writer = await asyncio.open_connection(
            self.host, self.port, ssl=context, server_hostname=self.host if context is not None else None)
        self._read_task = asyncio.create_task(self._read_loop())
        if self.security.uses_sasl:
            await self._authenticate()

    async def _authenticate(self) -> None:
        """SaslHandshake v1, then SaslAuthenticate v2 until the mechanism is done (Kafka's SaslClientAuthenticator)."""
        handshake = await self.request(SaslHandshakeRequest(mechanism=self.security.mechanism), 1)
        if handshake.error_code:
            raise AuthenticationFailed(f"SASL mechanism {self.security.mechanism} refused (error "
                                       f"{handshake.error_code}); the broker enables {handshake.mechanisms}")
        exchange = self.security.sasl_exchange()
        token: bytes | None = exchange.first()
        while token is not None:
            answer = await self.request(SaslAuthenticateRequest(auth_bytes=token), 2)
            if answer.error_code:
                raise AuthenticationFailed(answer.error_message or f"SASL authentication failed ({answer.error_code})")
            token = exchange.respond(bytes(answer.auth_bytes))

    def _frame(self, request: Any, version: int, correlation_id: int) -> bytes:
        client_id = self.client_id.encode()
        header = struct.pack(">hhih", request.API_KEY, version, correlation_id, len(client_id)) + client_id
        if REQUESTS[request.API_KEY].flexible_version_q(version):
            header += b"\x00"
        body = bytes(request.encode(version=version))
        return _SIZE.pack(len(header) + len(body)) + header + body

    def send(self, request: Any, version: int, expect_response: bool = True) -> asyncio.Future[Any] | None:
        """Write `request` now; a future of the decoded response (None when no answer is expected)."""
        if self.closed or self._writer is None:
            raise ConnectionClosed(f"connection to {self.host}:{self.port} is closed")
        self._correlation_id += 1
        self._writer.write(self._frame(request, version, self._correlation_id))
        if not expect_response:
            return None
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append((self._correlation_id, request.API_KEY, version, future))
        return future

    async def request(self, request: Any, version: int) -> Any:
        """Send `request` and wait for its response."""
        future = self.send(request, version)
        assert future is not None
        return await future

    async def _read_loop(self) -> None:
        assert self._reader is not None
        error: BaseException = ConnectionClosed(f"connection to {self.host}:{self.port} closed by the broker")
        try:
            while True:
                size = _SIZE.unpack(await self._reader.readexactly(4))[0]
                frame = await self._reader.readexactly(size)
                if not self._waiting:
                    raise ConnectionClosed("response with no request waiting for it")
                correlation_id, api_key, version, future = self._waiting.popleft()
                if _SIZE.unpack_from(frame)[0] != correlation_id:
                    raise ConnectionClosed("response out of order")
                response_class = RESPONSES[api_key]
                flexible = api_key != API_VERSIONS_KEY and response_class.flexible_version_q(version)
                try:
                    response = response_class.decode(frame[5 if flexible else 4 :], version=version)
                except Exception as exc:  # a malformed answer fails this request only
                    if not future.done():
                        future.set_exception(exc)
                    continue
                if not future.done():
                    future.set_result(response)
        except (asyncio.IncompleteReadError, ConnectionError, OSError) as exc:
            if isinstance(exc, ConnectionClosed):
                error = exc
        except asyncio.CancelledError:
            pass
        finally:
            self._fail_all(error)

    def abort(self, reason: str) -> None:
        """Give up on the connection now: every request waiting on it fails with ConnectionClosed (Kafka's
        NetworkClient disconnects when a request outlives request.timeout.ms)."""
        if self._read_task is not None:
            self._read_task.cancel()
        self._fail_all(ConnectionClosed(f"connection to {self.host}:{self.port} aborted: {reason}"))

    def _fail_all(self, error: BaseException) -> None:
        self._closed = True
        while self._waiting:
            future = self._waiting.popleft()[3]
            if not future.done():
                future.set_exception(error)
        if self._writer is not None:
            self._writer.close()

    async def close(self) -> None:
        self._closed = True
        if self._read_task is not None:
            self._read_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._read_task
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await self._writer.wait_closed()
