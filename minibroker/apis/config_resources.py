"""Shared by the config APIs: resource types and how a resource name resolves."""

from __future__ import annotations

from ..core.cluster import Cluster, Topic
from ..protocol.errors import ErrorCode, KafkaError

TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8


def resolve_topic(cluster: Cluster, name: str) -> Topic:
    """The topic named by a TOPIC resource; KafkaError if unknown."""
    topic = cluster.topics.get(name)
    if topic is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic '{name}' does not exist.")
    return topic


def broker_is_node_level(cluster: Cluster, node_id: int, name: str) -> bool:
    """True for this node's own resource ("<id>"), False for the cluster default (""); KafkaError otherwise."""
    if name == "":
        return False
    if name != str(node_id) and not (name.isdigit() and cluster.node(int(name)) is not None):
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            f"Unexpected broker id, expected {node_id} or empty string, but received {name}",
        )
    return True
