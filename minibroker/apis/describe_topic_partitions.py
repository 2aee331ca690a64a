"""DescribeTopicPartitions (75): topic and partition metadata with a paging cursor.

Version 0, the only one. Mirrors DescribeTopicPartitionsRequestHandler.

A topic needs DESCRIBE to be described. Listing every topic leaves out the ones the caller may not describe;
one asked for by name is answered TOPIC_AUTHORIZATION_FAILED, after the described ones and whether or not it
exists. Every described topic carries the operations the caller may perform on it, unasked.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.cluster_model import INTERNAL_TOPICS, validate_topic_name
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse
from .authorized_operations import NOT_REQUESTED_INT32, to_32bit_field
from .context import RequestContext

API_KEY = 75
MIN_VERSION, MAX_VERSION = 0, 0

_Topic = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic
_Partition = _Topic.DescribeTopicPartitionsResponsePartition
_Cursor = DescribeTopicPartitionsResponse.Cursor
ZERO_UUID = uuid.UUID(int=0)


def handle(request: DescribeTopicPartitionsRequest, ctx: RequestContext) -> DescribeTopicPartitionsResponse:
    cluster = ctx.cluster
    names = sorted({t.name for t in request.topics}) if request.topics else sorted(cluster.topic_names())
    cursor = request.cursor
    if cursor is not None:
        names = [n for n in names if n >= cursor.topic_name]
    # do not disclose the existence of topics the caller may not DESCRIBE: they are not even looked up
    describable = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, names)
    refused = [] if not request.topics else [
        _Topic(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=name, topic_id=ZERO_UUID, is_internal=False,
               partitions=[], topic_authorized_operations=NOT_REQUESTED_INT32)
        for name in names if name not in describable]
    names = [n for n in names if n in describable]
    budget = max(request.response_partition_limit, 1)
    topics: list[Any] = []
    next_cursor = None
    for name in names:
        topic = cluster.topic(name)
        if topic is None:
            # as MetadataCache's describeTopicResponse: a name no topic could have is INVALID_TOPIC_EXCEPTION
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if _legal(name) else ErrorCode.INVALID_TOPIC_EXCEPTION
            topics.append(_Topic(error_code=code, name=name, topic_id=ZERO_UUID,
                                 is_internal=False, partitions=[], topic_authorized_operations=_operations(ctx, name)))
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
                             partitions=partitions, topic_authorized_operations=_operations(ctx, name)))
        if next_cursor is not None:
            break
    return DescribeTopicPartitionsResponse(throttle_time_ms=0, topics=topics + refused, next_cursor=next_cursor)


def _legal(name: str) -> bool:
    try:
        validate_topic_name(name)
    except KafkaError:
        return False
    return True


def _operations(ctx: RequestContext, name: str) -> int:
    return to_32bit_field(ctx.authorized_operations(ResourceType.TOPIC, name))
