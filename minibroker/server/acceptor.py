"""Accepting connections as Kafka's Acceptor does: each is counted against the connection limits the moment
accept() returns it, before any TLS handshake, and refusals and accept errors are logged.

The event loop's own server (libuv's, under uvloop) hands a TLS connection to its protocol only once the
handshake is over, so silent TCP connections to an SSL listener escaped `max.connections`,
`max.connections.per.ip` and `connections.max.idle.ms`; and when the process runs out of file
descriptors libuv accepts and closes new connections unseen. So each listener owns its listening
sockets, read with the loop's `add_reader` as Kafka's Acceptor selects on its ServerSocketChannel, and
hands every admitted socket to a `ConnectionAdapter` (server/adapter.py).
"""

from __future__ import annotations

import asyncio
import logging
import socket

from .adapter import ConnectionAdapter, Listener

log = logging.getLogger("minibroker.connection")

# After an accept error (out of file descriptors, buffers or memory) the listener waits this long before
# accepting again, as asyncio's own servers do; meanwhile new connections wait in the listen backlog.
ACCEPT_RETRY_DELAY_S = 1.0


async def listening_sockets(host: str | None, port: int, backlog: int) -> list[socket.socket]:
    """Listening, non-blocking sockets bound to `host` (every interface when empty) as loop.create_server binds."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host or None, port, family=socket.AF_UNSPEC, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _name, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # each family on a socket of its own
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                raise OSError(exc.errno, f"error while attempting to bind on address {address!r}: "
                                         f"{(exc.strerror or '').lower()}") from None
            sock.listen(backlog)
            sock.setblocking(False)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class Acceptor:
    """Accepts the connections of one listener: admitted by its quotas, refused (and logged), or errors logged."""

    def __init__(self, listener: Listener, sockets: list[socket.socket], backlog: int) -> None:
        self.listener = listener
        self.sockets = sockets
        self._backlog = backlog  # at most this many accepted per readiness, as asyncio's servers do
        self._loop: asyncio.AbstractEventLoop | None = None
        self._retries: dict[socket.socket, asyncio.TimerHandle] = {}

    def start(self) -> None:
        """Start accepting on the running loop."""
        self._loop = asyncio.get_running_loop()
        for sock in self.sockets:
            self._loop.add_reader(sock, self._accept, sock)

    def close(self) -> None:
        """Stop accepting and close the listening sockets (connections already accepted stay)."""
        for retry in self._retries.values():
            retry.cancel()
        self._retries.clear()
        for sock in self.sockets:
            if self._loop is not None and sock.fileno() != -1:
                self._loop.remove_reader(sock)
            sock.close()

    def _accept(self, listening: socket.socket) -> None:
        for _ in range(self._backlog):
            try:
                sock, address = listening.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue  # the client gave up while it waited in the backlog
            except OSError as exc:
                # Kafka's Acceptor: "Error while accepting connection"; here the listener also pauses, as
                # asyncio's servers do, instead of failing the same accept again and again meanwhile
                log.error("Error while accepting connection on %s: %s; accepting again in %.0f s",
                          self._describe(listening), exc, ACCEPT_RETRY_DELAY_S)
                assert self._loop is not None
                self._loop.remove_reader(listening)
                self._retries[listening] = self._loop.call_later(ACCEPT_RETRY_DELAY_S, self._resume, listening)
                return
            self._admit(sock, address)

    def _resume(self, listening: socket.socket) -> None:
        self._retries.pop(listening, None)
        if self._loop is not None and listening.fileno() != -1:
            self._loop.add_reader(listening, self._accept, listening)

    def _admit(self, sock: socket.socket, address: tuple[str, int]) -> None:
        """Count the connection against the limits (SocketServer's ConnectionQuotas.inc) and serve it, or close it."""
        ip = address[0]
        quotas = self.listener.quotas
        if quotas is not None:
            refused = quotas.admit(ip)
            if refused is not None:
                # SocketServer's wording; the count tells how many were refused since start-up
                log.info("Rejected connection from /%s, %s; %d refused so far", ip, refused, quotas.rejected)
                sock.close()
                return
        try:
            sock.setblocking(False)
            ConnectionAdapter(self.listener, admitted_ip=ip if quotas is not None else None).start(sock, address)
        except OSError as exc:
            log.error("Encountered an error while configuring the connection from /%s, closing it: %s", ip, exc)
            if quotas is not None:
                quotas.release(ip)
            sock.close()

    def _describe(self, listening: socket.socket) -> str:
        endpoint = self.listener.endpoint
        name = endpoint.listener if endpoint is not None else "PLAINTEXT"
        try:
            host, port = listening.getsockname()[:2]
        except OSError:
            return f"listener {name}"
        return f"listener {name} ({host}:{port})"
