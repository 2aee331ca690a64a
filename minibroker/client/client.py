"""Bootstrap, metadata cache and one connection per node."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import ApiVersionsRequest, MetadataRequest
from .connection import BrokerConnection
from .security import ClientSecurity

METADATA_VERSION = 12
# Kafka's socket.connection.setup.timeout.ms: a connection (with its ApiVersions) not ready by then is given up
CONNECTION_SETUP_TIMEOUT_S = 10.0


@dataclass
class PartitionInfo:
    """What the metadata says of one partition."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int


@dataclass
class TopicInfo:
    """A topic's id and partitions."""

    name: str
    topic_id: uuid.UUID
    partitions: list[PartitionInfo] = field(default_factory=list)


class KafkaClient:
    """Talks to a cluster: bootstrap, metadata, a pipelined connection per node, raw requests."""

    def __init__(self, bootstrap_servers: str, client_id: str = "minibroker-client",
                 security: ClientSecurity | None = None) -> None:
        self.bootstrap = [(host, int(port)) for host, _, port in
                          (item.strip().rpartition(":") for item in bootstrap_servers.split(","))]
        self.client_id = client_id
        self.security = security  # TLS and SASL settings of every connection (client/security.py)
        self.nodes: dict[int, tuple[str, int]] = {}
        self.topics: dict[str, TopicInfo] = {}
        self.api_versions: dict[int, dict[int, tuple[int, int]]] = {}
        self._connections: dict[int, BrokerConnection] = {}
        self._connecting: dict[int, asyncio.Lock] = {}

    async def start(self) -> None:
        """Contact a bootstrap server and load the cluster's metadata."""
        last_error: Exception | None = None
        for host, port in self.bootstrap:
            connection = BrokerConnection(host, port, self.client_id, self.security)
            try:
                await connection.connect()
                await self._load_metadata(connection, None)
                return
            except OSError as exc:
                last_error = exc
            finally:
                await connection.close()
        raise ConnectionError(f"no bootstrap server answered: {last_error}")

    async def close(self) -> None:
        for connection in self._connections.values():
            await connection.close()
        self._connections.clear()

    async def connection(self, node_id: int) -> BrokerConnection:
        """The open connection to `node_id`, (re)connecting and learning its API versions when needed."""
        lock = self._connecting.setdefault(node_id, asyncio.Lock())
        async with lock:
            existing = self._connections.get(node_id)
            if existing is not None and not existing.closed:
                return existing
            host, port = self.nodes[node_id]
            connection = BrokerConnection(host, port, self.client_id, self.security)
            try:
                versions = await asyncio.wait_for(self._set_up(connection), CONNECTION_SETUP_TIMEOUT_S)
            except BaseException:
                await connection.close()
                raise
            if versions.error_code:
                raise KafkaError(ErrorCode(versions.error_code), "ApiVersions refused")
            self.api_versions[node_id] = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
            self._connections[node_id] = connection
            return connection

    @staticmethod
    async def _set_up(connection: BrokerConnection) -> Any:
        """Connect and ask the node's API versions."""
        await connection.connect()
        return await connection.request(
            ApiVersionsRequest(client_software_name="minibroker", client_software_version="0.1.0"), 3)

    def max_version(self, node_id: int, api_key: int, ours: int) -> int:
        """The highest version both this client (`ours`) and the node speak."""
        low, high = self.api_versions.get(node_id, {}).get(api_key, (0, -1))
        if high < low or ours < low:
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, f"node {node_id} does not speak api {api_key}")
        return min(high, ours)

    async def request(self, node_id: int, message: Any, version: int) -> Any:
        """Send a raw request at `version` to `node_id`."""
        return await (await self.connection(node_id)).request(message, version)

    async def refresh_metadata(self, topics: list[str] | None = None, allow_auto_topic_creation: bool = True) -> None:
        """Reload the metadata of `topics` (all when None) from any node."""
        node_id = next(iter(self.nodes))
        await self._load_metadata(await self.connection(node_id), topics, allow_auto_topic_creation)

    async def _load_metadata(self, connection: BrokerConnection, topics: list[str] | None,
                             allow_auto_topic_creation: bool = True) -> None:
        wanted = None if topics is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in topics]
        response = await connection.request(MetadataRequest(topics=wanted,
                                                            allow_auto_topic_creation=allow_auto_topic_creation),
                                            METADATA_VERSION)
        self.nodes = {b.node_id: (b.host, b.port) for b in response.brokers}
        for topic in response.topics:
            if topic.error_code:
                continue
            info = TopicInfo(topic.name, topic.topic_id)
            info.partitions = sorted((PartitionInfo(topic.name, p.partition_index, p.leader_id, p.leader_epoch)
                                      for p in topic.partitions), key=lambda p: p.partition)
            self.topics[topic.name] = info

    def leader(self, topic: str, partition: int) -> int:
        """The node leading a partition, per the cached metadata."""
        return self.topics[topic].partitions[partition].leader
