"""What a handler knows about the request it serves."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.cluster import Cluster, Node


@dataclass(slots=True)
class Session:
    """Who is on the other end of a connection: where from, through which listener, authenticated as whom."""

    client_host: str = ""  # as Kafka shows it, "/127.0.0.1"
    listener: str = "PLAINTEXT"
    principal: str = "User:ANONYMOUS"


@dataclass(slots=True)
class RequestContext:
    """The cluster, the node this listener speaks for, and the request header."""

    cluster: Cluster
    node: Node
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    client_host: str = ""
    listener: str = "PLAINTEXT"  # the listener the request came through: Metadata answers with its addresses
    principal: str = "User:ANONYMOUS"  # who the connection authenticated as (TLS or SASL)

    def address(self, node: Node) -> tuple[str, int]:
        """Where clients of this listener reach `node`."""
        return node.address(self.listener)


class CloseConnection(Exception):
    """Kafka would close this connection (bad header, unsupported version, acks=0 failure)."""
