"""DeleteRecords (21): move a partition's log start offset forward.

Versions 0-2: v1 is v0 (the answer may come before throttling); v2 is flexible. Mirrors
KafkaApis.handleDeleteRecordsRequest and ReplicaManager.deleteRecords.

DELETE on the topic is checked before the partition is looked up (TOPIC_AUTHORIZATION_FAILED, nothing
deleted).
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import DeleteRecordsRequest, DeleteRecordsResponse
from .context import RequestContext

API_KEY = 21
MIN_VERSION, MAX_VERSION = 0, 2

HIGH_WATERMARK = -1
_Topic = DeleteRecordsResponse.DeleteRecordsTopicResult
_Partition = _Topic.DeleteRecordsPartitionResult


def handle(request: DeleteRecordsRequest, ctx: RequestContext) -> DeleteRecordsResponse:
    cluster = ctx.cluster
    deletable = ctx.authorized_names(AclOperation.DELETE, ResourceType.TOPIC, [t.name for t in request.topics])
    topics = []
    for topic_req in request.topics:
        partitions = []
        for part_req in topic_req.partitions:
            index = part_req.partition_index
            try:
                if topic_req.name not in deletable:
                    raise KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                partition = cluster.partition(topic_req.name, index)
                if partition.leader_id != ctx.node.node_id:
                    raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
                log = partition.log
                offset = log.high_watermark if part_req.offset == HIGH_WATERMARK else part_req.offset
                if offset < 0 or offset > log.high_watermark:
                    raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE)
                log.delete_records_before(offset)
                partitions.append(_Partition(partition_index=index, low_watermark=log.log_start_offset,
                                             error_code=0))
            except KafkaError as exc:
                partitions.append(_Partition(partition_index=index, low_watermark=-1, error_code=exc.code))
        topics.append(_Topic(name=topic_req.name, partitions=partitions))
    return DeleteRecordsResponse(throttle_time_ms=0, topics=topics)
