"""A logging TCP proxy in front of one Kafka broker: what each client connection asked and what it was told.

`LoggingProxy(host, port).start()` listens on 127.0.0.1 (a thread with its own asyncio loop) and forwards
every connection to the broker unchanged, except that Metadata, FindCoordinator and DescribeCluster answers
name the proxy instead of the broker, so a client's later connections come through it too. Each connection
keeps its exchanges in request order: (API key, version, correlation id, error code), the error read from
the response with minibroker's codec as minibroker's own request log reads it (`error_code_of`: the first
non-zero error code; "none" for a request that gets no answer, such as an acks=0 Produce).
"""

from __future__ import annotations

import asyncio
import struct
import threading
from dataclasses import dataclass, field
from typing import Any

from minibroker.protocol.messages import RESPONSES
from minibroker.server.request_log import error_code_of

#: APIs whose answers carry broker addresses: Metadata, FindCoordinator, DescribeCluster.
ADDRESS_APIS = frozenset({3, 10, 60})
_SIZE = struct.Struct(">i")
_REQUEST_HEADER = struct.Struct(">hhi")  # api key, api version, correlation id


@dataclass
class Exchange:
    api_key: int
    api_version: int
    correlation_id: int
    error_code: int | str = "none"


@dataclass
class Connection:
    """One client connection through the proxy, its exchanges in request order."""

    index: int
    exchanges: list[Exchange] = field(default_factory=list)

    def transcript(self) -> list[tuple[int, int, int | str]]:
        return [(e.api_key, e.api_version, e.error_code) for e in self.exchanges]


def _rewrite_addresses(value: Any, host: str, port: int) -> None:
    """Every (host, port) in a decoded answer becomes the proxy's, in place."""
    names = getattr(type(value), "fields", {})
    if "host" in names and "port" in names and value.host is not None:
        value.host, value.port = host, port
    for name in names:
        items = getattr(value, name, None)
        if isinstance(items, list):
            for item in items:
                _rewrite_addresses(item, host, port)


def rewrite_answer(api_key: int, api_version: int, frame: bytes, host: str, port: int) -> bytes:
    """A response frame (size prefix included) whose broker addresses name `host:port`."""
    response_class = RESPONSES[api_key]
    header = 9 if response_class.flexible_version_q(api_version) else 8  # size, correlation id, tagged fields
    answer = response_class.decode(frame[header:], version=api_version)
    _rewrite_addresses(answer, host, port)
    answer._header = None  # decode() leaves it unset, encode() reads it
    body = frame[4:header] + bytes(answer.encode(version=api_version))
    return _SIZE.pack(len(body)) + body


class LoggingProxy:
    """Forwards 127.0.0.1:`port` to `upstream`, logging every connection's exchanges."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.host = "127.0.0.1"
        self.port = 0
        self.connections: list[Connection] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="logging-proxy", daemon=True)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> LoggingProxy:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, self.host, 0), self._loop).result(10)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    def stop(self) -> None:
        async def close() -> None:
            assert self._server is not None
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop.close()

    def transcripts(self) -> list[list[tuple[int, int, int | str]]]:
        """Each connection's (API key, version, error code) sequence, in the order connections were made."""
        with self._lock:
            return [connection.transcript() for connection in self.connections]

    async def _serve(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        with self._lock:
            connection = Connection(len(self.connections))
            self.connections.append(connection)
        pending: dict[int, Exchange] = {}
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            client_writer.close()
            self._tasks.discard(task)
            return
        try:
            await asyncio.gather(self._requests(client_reader, upstream_writer, connection, pending),
                                 self._answers(upstream_reader, client_writer, pending), return_exceptions=True)
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            for writer in (client_writer, upstream_writer):
                writer.close()
            self._tasks.discard(task)

    async def _requests(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, connection: Connection,
                        pending: dict[int, Exchange]) -> None:
        try:
            while True:
                size = await reader.readexactly(4)
                frame = await reader.readexactly(_SIZE.unpack(size)[0])
                if len(frame) >= _REQUEST_HEADER.size:
                    exchange = Exchange(*_REQUEST_HEADER.unpack_from(frame, 0))
                    with self._lock:
                        connection.exchanges.append(exchange)
                    pending[exchange.correlation_id] = exchange
                writer.write(size + frame)
                await writer.drain()
        finally:
            writer.close()  # the client went: so does the upstream connection, which ends _answers

    async def _answers(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       pending: dict[int, Exchange]) -> None:
        try:
            while True:
                size = await reader.readexactly(4)
                frame = size + await reader.readexactly(_SIZE.unpack(size)[0])
                exchange = pending.pop(_SIZE.unpack_from(frame, 4)[0], None)
                if exchange is not None:
                    exchange.error_code = error_code_of(exchange.api_key, exchange.api_version, frame)
                    if exchange.api_key in ADDRESS_APIS:
                        frame = rewrite_answer(exchange.api_key, exchange.api_version, frame, self.host, self.port)
                writer.write(frame)
                await writer.drain()
        finally:
            writer.close()
