"""A TCP proxy that delays each direction by a fixed time, to run clients and a broker over a simulated RTT.

Every chunk read from one socket is stamped on arrival and written to the other
socket `one_way_delay_ms` later, in arrival order. There is no pacing beyond
that: the proxy keeps reading while chunks wait (the "wire" holds whatever is
in flight) and only stops reading a socket when the other socket's write
buffer is full, as TCP would. An end of stream or a closed socket reaches the
other side after the data that came before it.

The TCP handshake itself is not delayed: a client's connect completes at once
and its first bytes take the one-way delay like all others.

    proxy = LatencyProxy("127.0.0.1", 0, target=("127.0.0.1", 9092), one_way_delay_ms=50)
    await proxy.start()     # proxy.port is the port to connect to; 100 ms RTT
    ...
    await proxy.stop()
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import Literal, cast

log = logging.getLogger(__name__)

_End = Literal["eof", "close"]


class _Direction:
    """Bytes read from one socket, written to the other `delay` seconds after they arrived."""

    def __init__(self, connection: _ProxiedConnection, delay: float) -> None:
        self.connection = connection
        self.delay = delay
        self.queue: deque[tuple[float, bytes | _End]] = deque()
        self.dest: asyncio.Transport | None = None  # None until the upstream socket is connected
        self.timer: asyncio.TimerHandle | None = None
        self.ended = False  # an end of stream was queued: no more data may follow it
        self.eof_delivered = False
        self.dead = False  # the destination is gone: drop everything
        self.bytes = 0

    def push(self, payload: bytes | _End) -> None:
        if self.dead or (self.ended and payload != "close"):
            return
        if isinstance(payload, bytes):
            self.bytes += len(payload)
        else:
            self.ended = True
        # time.monotonic, not loop.time(): some loops keep a millisecond clock, and the delay is a lower bound
        self.queue.append((time.monotonic() + self.delay, payload))
        self._schedule()

    def attach(self, dest: asyncio.Transport) -> None:
        self.dest = dest
        self._schedule()

    def kill(self) -> None:
        self.dead = True
        self.queue.clear()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _schedule(self) -> None:
        if self.queue and self.timer is None and self.dest is not None and not self.dead:
            wait = max(self.queue[0][0] - time.monotonic(), 0.0)
            self.timer = asyncio.get_running_loop().call_later(wait, self._flush)

    def _flush(self) -> None:
        self.timer = None
        dest = self.dest
        if dest is None or self.dead:
            return
        now = time.monotonic()
        chunks: list[bytes] = []
        end: _End | None = None
        while self.queue and self.queue[0][0] <= now:
            payload = self.queue.popleft()[1]
            if isinstance(payload, bytes):
                chunks.append(payload)
            else:
                end = payload
                break
        # everything due goes out in one write: fewer syscalls, same bytes, same order
        if chunks and not dest.is_closing():
            dest.write(b"".join(chunks) if len(chunks) > 1 else chunks[0])
        if end == "close":
            self.kill()
            dest.close()  # close() still sends what the transport has buffered
        elif end == "eof":
            self.eof_delivered = True
            if dest.can_write_eof() and not dest.is_closing():
                dest.write_eof()
            self.connection.eof_delivered()
        self._schedule()


class _Side(asyncio.Protocol):
    """One socket of a proxied connection: what it reads goes out through `outbound`, `inbound` writes to it."""

    def __init__(self, connection: _ProxiedConnection, outbound: _Direction, inbound: _Direction) -> None:
        self.connection = connection
        self.outbound = outbound
        self.inbound = inbound
        self.transport: asyncio.Transport | None = None
        self.peer: _Side | None = None
        self.lost = False
        self.reading_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a socket transport (uvloop's ones do not subclass asyncio.Transport, hence no isinstance check)
        self.transport = cast(asyncio.Transport, transport)
        self.inbound.attach(self.transport)

    def data_received(self, data: bytes) -> None:
        self.outbound.push(data)

    def eof_received(self) -> bool:
        self.outbound.push("eof")
        return True  # half-close: the other direction may still deliver its data to us

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.inbound.kill()
        self.outbound.push("close")
        self.connection.side_lost()

    # this socket cannot take more: stop reading the one that feeds it, as a full TCP window would
    def pause_writing(self) -> None:
        if self.peer is not None:
            self.peer.set_reading(False)

    def resume_writing(self) -> None:
        if self.peer is not None:
            self.peer.set_reading(True)

    def set_reading(self, on: bool) -> None:
        paused = not on
        if self.transport is None or self.transport.is_closing() or paused == self.reading_paused:
            return
        if paused:
            self.transport.pause_reading()
        else:
            self.transport.resume_reading()
        self.reading_paused = paused

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()


class _ProxiedConnection:
    """A client socket, its upstream socket and the two delayed directions between them."""

    def __init__(self, proxy: LatencyProxy, delay: float) -> None:
        self.proxy = proxy
        self.up = _Direction(self, delay)  # client -> target
        self.down = _Direction(self, delay)  # target -> client
        self.client = _Side(self, outbound=self.up, inbound=self.down)
        self.upstream = _Side(self, outbound=self.down, inbound=self.up)
        self.client.peer, self.upstream.peer = self.upstream, self.client
        self.connect_task: asyncio.Task[None] | None = None

    async def connect(self, target: tuple[str, int]) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.create_connection(lambda: self.upstream, target[0], target[1])
        except OSError as exc:
            log.warning("latency proxy: cannot connect to %s:%d: %s", target[0], target[1], exc)
            self.abort()

    def eof_delivered(self) -> None:
        # both directions ended cleanly: nothing more can pass, close both sockets
        if self.up.eof_delivered and self.down.eof_delivered:
            for side in (self.client, self.upstream):
                if side.transport is not None:
                    side.transport.close()

    def side_lost(self) -> None:
        if self.client.lost and self.upstream.transport is None:
            self.abort()  # gone before the upstream socket was even connected
        elif self.client.lost and self.upstream.lost:
            self.proxy._forget(self)

    def abort(self) -> None:
        if self.connect_task is not None:
            self.connect_task.cancel()
        self.up.kill()
        self.down.kill()
        self.client.abort()
        self.upstream.abort()
        self.proxy._forget(self)


class LatencyProxy:
    """Accepts TCP connections on `listen_host:listen_port` and relays each to `target`, delayed both ways.

    `target` may be set after `start()` (e.g. once the broker behind the proxy knows its port); it must be
    set before the first client connects. `one_way_delay_ms` applies to connections accepted afterwards.
    """

    def __init__(self, listen_host: str = "127.0.0.1", listen_port: int = 0,
                 target: tuple[str, int] | None = None, one_way_delay_ms: float = 0.0) -> None:
        if one_way_delay_ms < 0:
            raise ValueError("one_way_delay_ms must not be negative")
        self.listen_host = listen_host
        self.listen_port = listen_port
        self.target = target
        self.one_way_delay_ms = one_way_delay_ms
        self.connections_accepted = 0
        self._server: asyncio.Server | None = None
        self._connections: set[_ProxiedConnection] = set()
        self._bytes_up = self._bytes_down = 0  # of connections already gone

    @property
    def port(self) -> int:
        """The port clients connect to (known after `start()`)."""
        if self._server is None:
            raise RuntimeError("the proxy is not started")
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def address(self) -> str:
        """`host:port` to give clients."""
        return f"{self.listen_host}:{self.port}"

    @property
    def bytes_received(self) -> tuple[int, int]:
        """Bytes received from clients and from the target so far (client -> target, target -> client)."""
        live = list(self._connections)
        return (self._bytes_up + sum(c.up.bytes for c in live), self._bytes_down + sum(c.down.bytes for c in live))

    async def start(self) -> None:
        """Bind the listening socket."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._accept, self.listen_host, self.listen_port)

    async def stop(self) -> None:
        """Stop listening and drop every proxied connection at once."""
        if self._server is None:
            return
        self._server.close()
        for connection in list(self._connections):
            connection.abort()
        await self._server.wait_closed()
        self._server = None

    async def __aenter__(self) -> LatencyProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _accept(self) -> asyncio.Protocol:
        connection = _ProxiedConnection(self, self.one_way_delay_ms / 1000)
        self.connections_accepted += 1
        self._connections.add(connection)
        if self.target is None:
            log.warning("latency proxy: a client connected before a target was set; closing it")
            asyncio.get_running_loop().call_soon(connection.abort)
        else:
            connection.connect_task = asyncio.get_running_loop().create_task(connection.connect(self.target))
        return connection.client

    def _forget(self, connection: _ProxiedConnection) -> None:
        if connection in self._connections:
            self._connections.remove(connection)
            self._bytes_up += connection.up.bytes
            self._bytes_down += connection.down.bytes

