"""DescribeTopicPartitions (75): topic and partition metadata with a paging cursor.

Version 0, as DescribeTopicPartitionsRequestHandler: every described topic carries its authorized
operations, unasked (every topic operation: there is no authorizer).
"""

from __future__ import annotations

import uuid
from typing import Any

from ..core.acls import ResourceType
from ..core.cluster import INTERNAL_TOPICS
from ..protocol.errors import ErrorCode
from ..protocol.messages import DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse
from .authorized_operations import to_32bit_field
from .context import RequestContext

API_KEY = 75
MIN_VERSION, MAX_VERSION = 0, 0

_Topic = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic
_Partition = _Topic.DescribeTopicPartitionsResponsePartition
_Cursor = DescribeTopicPartitionsResponse.Cursor


def handle(request: DescribeTopicPartitionsRequest, ctx: RequestContext) -> DescribeTopicPartitionsResponse:
    cluster = ctx.cluster
    names = sorted({t.name for t in request.topics}) if request.topics else sorted(cluster.topics)
    cursor = request.cursor
    if cursor is not None:
        names = [n for n in names if n >= cursor.topic_name]
    budget = max(request.response_partition_limit, 1)
    topics: list[Any] = []
    next_cursor = None
    for name in names:
        topic = cluster.topics.get(name)
        if topic is None:
            topics.append(_Topic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=name, topic_id=uuid.UUID(int=0),
                                 is_internal=False, partitions=[],
                                 topic_authorized_operations=to_32bit_field(ctx.authorized_operations(ResourceType.TOPIC, name))))
            continue
        start = cursor.partition_index if cursor is not None and cursor.topic_name == name else 0
        partitions = []
        for partition in topic.partitions[start:]:
            if budget == 0:
                next_cursor = _Cursor(topic_name=name, partition_index=partition.index)
                break
            partitions.append(_Partition(
                error_code=0, partition_index=partition.index, leader_id=partition.leader_id,
                leader_epoch=partition.log.leader_epoch, replica_nodes=list(partition.replicas),
                isr_nodes=list(partition.replicas), eligible_leader_replicas=[], last_known_elr=[],
                offline_replicas=[],
            ))
            budget -= 1
        topics.append(_Topic(error_code=0, name=name, topic_id=topic.topic_id, is_internal=name in INTERNAL_TOPICS,
                             partitions=partitions, topic_authorized_operations=to_32bit_field(ctx.authorized_operations(ResourceType.TOPIC, name))))
        if next_cursor is not None:
            break
    return DescribeTopicPartitionsResponse(throttle_time_ms=0, topics=topics, next_cursor=next_cursor)
