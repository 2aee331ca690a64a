"""DescribeProducers (61): the active idempotent producers of each partition.

With an authorizer: READ on each topic, else its partitions get TOPIC_AUTHORIZATION_FAILED, before an
unknown topic is reported (KafkaApis.handleDescribeProducersRequest).
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import DescribeProducersRequest, DescribeProducersResponse
from .context import RequestContext

API_KEY = 61
MIN_VERSION, MAX_VERSION = 0, 0

_Topic = DescribeProducersResponse.TopicResponse
_Partition = _Topic.PartitionResponse
_Producer = _Partition.ProducerState

# Kafka answers with ApiError(Errors.TOPIC_AUTHORIZATION_FAILED), whose message is the error's default text
TOPIC_AUTHORIZATION_FAILED_MESSAGE = "Topic authorization failed."


def handle(request: DescribeProducersRequest, ctx: RequestContext) -> DescribeProducersResponse:
    topics = []
    for topic_req in request.topics:
        if not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic_req.name):
            topics.append(_Topic(name=topic_req.name, partitions=[
                _Partition(partition_index=index, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                           error_message=TOPIC_AUTHORIZATION_FAILED_MESSAGE, active_producers=[])
                for index in topic_req.partition_indexes]))
            continue
        partitions = []
        for index in topic_req.partition_indexes:
            try:
                partition = ctx.cluster.partition(topic_req.name, index)
                if partition.leader_id != ctx.node.node_id:
                    raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
                producers = [
                    _Producer(
                        producer_id=pid, producer_epoch=entry.producer_epoch, last_sequence=entry.last_sequence(),
                        last_timestamp=entry.last_timestamp, coordinator_epoch=entry.coordinator_epoch,
                        current_txn_start_offset=(-1 if entry.current_txn_first_offset is None
                                                  else entry.current_txn_first_offset),
                    )
                    for pid, entry in partition.producer_state.producers.items()
                ]
                partitions.append(_Partition(partition_index=index, error_code=0, error_message=None,
                                             active_producers=producers))
            except KafkaError as exc:
                partitions.append(_Partition(partition_index=index, error_code=exc.code, error_message=exc.message,
                                             active_producers=[]))
        topics.append(_Topic(name=topic_req.name, partitions=partitions))
    return DescribeProducersResponse(throttle_time_ms=0, topics=topics)
