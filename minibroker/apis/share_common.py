"""Shared by the share-group APIs (KIP-932): the cluster's share state (Cluster.shares), the `share.version`
gate, and where a share partition starts and how far a share fetch may read.
"""

from __future__ import annotations

import uuid

from ..core.acls import AclOperation, ResourceType
from ..core.cluster import Cluster, Partition
from ..core.share_partition import BATCH_NOT_FOUND
from ..core.share_state import ShareState
from ..protocol.errors import ErrorCode
from .context import RequestContext
from .feature_levels import feature_levels

SHARE_VERSION = "share.version"
UNKNOWN_PARTITION = "This server does not host this topic-partition."  # Errors.UNKNOWN_TOPIC_OR_PARTITION's text


def share_state(cluster: Cluster) -> ShareState:
    """The cluster's share state (core/share_state.py)."""
    return cluster.shares


def is_share_group(cluster: Cluster, group_id: str) -> bool:
    """Whether `group_id` names a share group (the classic and consumer APIs then refuse it as Kafka does)."""
    return cluster.shares.is_share_group(group_id)


def share_enabled(cluster: Cluster) -> bool:
    """Whether share groups are on: Kafka serves their APIs only with `share.version` finalized at 1 or more
    (otherwise every answer is UNSUPPORTED_VERSION, though ApiVersions still lists them)."""
    return feature_levels(cluster).level(SHARE_VERSION) >= 1


def group_refusal(ctx: RequestContext, group_id: str, must_exist: bool) -> tuple[ErrorCode, str | None] | None:
    """Why Alter/DeleteShareGroupOffsets refuse the whole request for `group_id`, if they do: the share gate,
    READ on the group, the coordinator check, an unknown group (when it must exist), a group with members."""
    if not share_enabled(ctx.cluster):
        return ErrorCode.UNSUPPORTED_VERSION, None
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, None
    if ctx.cluster.coordinator_node(group_id).node_id != ctx.node.node_id:
        return ErrorCode.NOT_COORDINATOR, None
    group = ctx.cluster.shares.coordinator.group(group_id)
    if group is None:
        if ctx.cluster.groups.group_type(group_id) in ("classic", "consumer"):
            return ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group."
        return (ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.") if must_exist else None
    if group.members:
        return ErrorCode.NON_EMPTY_GROUP, "The group is not empty."
    return None


def start_offset(cluster: Cluster, group_id: str, topic: str, index: int) -> int:
    """Where a new share partition starts: `share.auto.offset.reset` (latest by default) of the group."""
    partition = cluster.find_partition(topic, index)
    if partition is None:
        return 0
    reset = str(cluster.config.group_value(group_id, "share.auto.offset.reset"))
    if reset == "earliest":
        return partition.log.log_start_offset
    return partition.log.high_watermark


def is_read_committed(cluster: Cluster, group_id: str) -> bool:
    """Whether the group's `share.isolation.level` is read_committed."""
    return str(cluster.config.group_value(group_id, "share.isolation.level")) == "read_committed"


def fetch_upper_bound(cluster: Cluster, group_id: str, partition: Partition) -> int:
    """How far a share fetch may acquire: the LSO under read_committed, else the high watermark."""
    if is_read_committed(cluster, group_id):
        return cluster.last_stable_offset(partition)
    return partition.log.high_watermark


def acknowledge_partition(ctx: RequestContext, group_id: str, member_id: str, topic_id: uuid.UUID, index: int,
                          batches: list[tuple[int, int, list[int]]]) -> tuple[ErrorCode, str | None, tuple[int, int]]:
    """Apply a member's acknowledgement batches to one partition: (error, message, (leader id, leader epoch)).

    The first refused batch answers for the partition; the batches before it stay applied, as in Kafka.
    """
    cluster = ctx.cluster
    topic = cluster.topic_by_id(topic_id)
    if topic is None:
        return ErrorCode.UNKNOWN_TOPIC_ID, None, (-1, -1)
    if not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic.name):
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED, None, (-1, -1)
    partition = topic.partition(index)
    if partition is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None, (-1, -1)
    leader = (partition.leader_id, partition.log.leader_epoch)
    coordinator = share_state(cluster).coordinator
    share_partition = coordinator.initialized_share_partition(group_id, topic.name, index)
    if share_partition is None:
        return ErrorCode.INVALID_RECORD_STATE, BATCH_NOT_FOUND, leader
    lock_ms = coordinator.config_int(group_id, "share.record.lock.duration.ms")
    now = cluster.clock.now_ms()
    for first, last, types in batches:
        code, message = share_partition.acknowledge(member_id, first, last, types, lock_ms, now)
        if code is not ErrorCode.NONE:
            return code, message, leader
    return ErrorCode.NONE, None, leader
