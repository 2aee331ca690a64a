"""Kafka's connection limits (SocketServer's ConnectionQuotas) and request memory pool, sans-IO.

`max.connections.per.ip`, with `max.connections.per.ip.overrides` (`host:count,...`), and
`max.connections`, read at each new connection so dynamic updates apply at once. A connection
over a limit is refused and logged; Kafka's acceptor makes a client over `max.connections` wait
instead, which a test could not tell from a hang, so here it is refused the same way.
"""

from __future__ import annotations

import functools
import socket
from collections import Counter
from collections.abc import Callable

from ..core.config import BrokerConfig


class ConnectionQuotas:
    """Connections counted per client IP and in total for one node."""

    def __init__(self, config: BrokerConfig) -> None:
        self._config = config
        self._per_ip: Counter[str] = Counter()
        self.total = 0
        self.rejected = 0

    def admit(self, ip: str) -> str | None:
        """Count a new connection from `ip`, or say why Kafka would refuse it (then nothing is counted)."""
        per_ip = parse_overrides(self._config["max.connections.per.ip.overrides"]).get(
            ip, self._config["max.connections.per.ip"])
        if self._per_ip[ip] >= per_ip:
            self.rejected += 1
            return f"address already has the configured maximum of {per_ip} connections (max.connections.per.ip)"
        if self.total >= self._config["max.connections"]:
            self.rejected += 1
            return (f"the node already has the configured maximum of {self._config['max.connections']} "
                    f"connections (max.connections)")
        self._per_ip[ip] += 1
        self.total += 1
        return None

    def release(self, ip: str) -> None:
        """An admitted connection closed."""
        self._per_ip[ip] -= 1
        if self._per_ip[ip] <= 0:
            del self._per_ip[ip]
        self.total -= 1


@functools.lru_cache(maxsize=16)
def parse_overrides(spec: str) -> dict[str, int]:
    """`host:count,...` as IP -> count (host names resolved once, as Kafka's InetAddress.getByName)."""
    overrides: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        host, _, count = item.rpartition(":")
        try:
            address = socket.gethostbyname(host)
        except OSError:
            address = host
        overrides[address] = int(count)
    return overrides


class RequestMemory:
    """`queued.max.request.bytes` (-1: unlimited), as Kafka's MemoryPool: bytes of requests being read.

    A connection reserves the request bytes it holds across reads: a frame's whole declared size once
    its size prefix is in, and what arrived behind a request whose answer waits; it gives them back
    as the frames are handled (a frame that arrives whole is handled from the shared read buffer and
    holds nothing). A connection that cannot reserve stops being read and is called back when memory
    is freed (Kafka mutes the channel until the pool has room).
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.reserved = 0
        self._waiting: list[Callable[[], None]] = []

    def try_reserve(self, size: int, wake: Callable[[], None]) -> bool:
        if self.capacity < 0 or self.reserved + size <= self.capacity:
            self.reserved += size
            return True
        self._waiting.append(wake)
        return False

    def release(self, size: int) -> None:
        self.reserved -= size
        waiting, self._waiting = self._waiting, []
        for wake in waiting:
            wake()
