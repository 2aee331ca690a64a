"""DescribeShareGroupOffsets (90): each share partition's start offset and lag, per share group (KIP-932).

Versions 0-1: v1 adds Lag (KIP-1226). Mirrors KafkaApis.handleDescribeShareGroupOffsetsRequest and
GroupCoordinatorService.describeShareGroupOffsets.

UNSUPPORTED_VERSION for every group unless `share.version` is finalized at 1 or more; DESCRIBE on each group,
else GROUP_AUTHORIZATION_FAILED; the coordinator check. Topics null asks for every share partition the group has,
by topic name; an unknown group has none, without an error, as Kafka 4.3.1 answers. A share partition an
assignment initialized but nothing acknowledged, released or timed out yet, or one the group does not have, is
start offset -1 and lag -1. Otherwise the answer is what Kafka's share coordinator last stored
(SharePartition.persisted): the start offset as it was before the last acknowledgement moved it, and as lag the
records from there to the high watermark not acknowledged or archived by then.
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse
from .context import RequestContext
from .group_common import coordinator_error
from .share_common import UNKNOWN_PARTITION, share_enabled, share_state

API_KEY = 90
MIN_VERSION, MAX_VERSION = 0, 1

_Group = DescribeShareGroupOffsetsResponse.DescribeShareGroupOffsetsResponseGroup
_Topic = _Group.DescribeShareGroupOffsetsResponseTopic
_Partition = _Topic.DescribeShareGroupOffsetsResponsePartition
_ZERO_UUID = None  # the codec writes a null topic id as Kafka's ZERO_UUID


def handle(request: DescribeShareGroupOffsetsRequest, ctx: RequestContext) -> DescribeShareGroupOffsetsResponse:
    groups = []
    for group in request.groups:
        if not share_enabled(ctx.cluster):
            groups.append(_failed(group.group_id, ErrorCode.UNSUPPORTED_VERSION))
        elif not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, group.group_id):
            groups.append(_failed(group.group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED))
        elif (error := coordinator_error(ctx, group.group_id)) is not None:
            groups.append(_failed(group.group_id, error))
        else:
            groups.append(_describe(ctx, group.group_id, group.topics))
    return DescribeShareGroupOffsetsResponse(throttle_time_ms=0, groups=groups)


def _failed(group_id: str, code: ErrorCode) -> Any:
    return _Group(group_id=group_id, topics=[], error_code=code, error_message=None)


def _describe(ctx: RequestContext, group_id: str, topics: list[Any] | None) -> Any:
    cluster = ctx.cluster
    group = share_state(cluster).coordinator.group(group_id)
    wanted: dict[str, list[int]] = {}
    if topics is None:
        for name, index in sorted(group.partitions if group is not None else ()):
            wanted.setdefault(name, []).append(index)
    else:
        for topic in topics:
            wanted.setdefault(topic.topic_name, []).extend(topic.partitions)
    answered = []
    for name, indexes in wanted.items():
        found = cluster.topic(name)
        parts = []
        for index in indexes:
            partition = found.partition(index) if found is not None else None
            if partition is None:
                parts.append(_partition(index, -1, -1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_PARTITION))
            elif not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name):
                parts.append(_partition(index, -1, -1, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            else:
                share_partition = group.partitions.get((name, index)) if group is not None else None
                persisted = share_partition.persisted if share_partition is not None else None
                if persisted is None:
                    parts.append(_partition(index, -1, -1))
                    continue
                start, settled = persisted
                lag = max(partition.log.high_watermark - start - settled, 0)
                parts.append(_partition(index, start, lag))
        answered.append(_Topic(topic_name=name, topic_id=found.topic_id if found is not None else _ZERO_UUID,
                               partitions=parts))
    return _Group(group_id=group_id, topics=answered, error_code=0, error_message=None)


def _partition(index: int, start_offset: int, lag: int, code: ErrorCode = ErrorCode.NONE,
               message: str | None = None) -> Any:
    return _Partition(partition_index=index, start_offset=start_offset, leader_epoch=0, lag=lag, error_code=code,
                      error_message=message)
