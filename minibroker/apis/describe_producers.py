"""DescribeProducers (61): the active idempotent producers of each partition.

Version 0, the only one. Mirrors KafkaApis.handleDescribeProducersRequest and
ReplicaManager.activeProducerState.

Each topic's name is checked first (INVALID_TOPIC_EXCEPTION with Topic.validate's message), then, with an
authorizer, READ on it (TOPIC_AUTHORIZATION_FAILED), then whether it exists (UNKNOWN_TOPIC_OR_PARTITION); each
of these answers every partition of the topic, with a message. The rest is answered without a message: any
replica of the partition answers, the leader or a follower (every replica here shares the one log and its
producer state), a node without one NOT_LEADER_OR_FOLLOWER.
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..core.cluster_model import invalid_topic_reason
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import DescribeProducersRequest, DescribeProducersResponse
from .context import RequestContext

API_KEY = 61
MIN_VERSION, MAX_VERSION = 0, 0

_Topic = DescribeProducersResponse.TopicResponse
_Partition = _Topic.PartitionResponse
_Producer = _Partition.ProducerState

# Kafka answers with ApiError(Errors.X), whose message is the error's default text
TOPIC_AUTHORIZATION_FAILED_MESSAGE = "Topic authorization failed."
UNKNOWN_TOPIC_OR_PARTITION_MESSAGE = "This server does not host this topic-partition."


def handle(request: DescribeProducersRequest, ctx: RequestContext) -> DescribeProducersResponse:
    topics = []
    for topic_req in request.topics:
        refusal = _topic_refusal(ctx, topic_req.name)
        if refusal is not None:
            code, message = refusal
            topics.append(_Topic(name=topic_req.name, partitions=[
                _Partition(partition_index=index, error_code=code, error_message=message, active_producers=[])
                for index in topic_req.partition_indexes]))
            continue
        partitions = []
        for index in topic_req.partition_indexes:
            try:
                partition = ctx.cluster.partition(topic_req.name, index)
                if ctx.node.node_id not in partition.replicas:
                    # ReplicaManager.getPartitionOrError: the topic exists, this broker hosts no replica of it
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


def _topic_refusal(ctx: RequestContext, name: str) -> tuple[ErrorCode, str] | None:
    """The code and message every partition of a topic gets, else None (KafkaApis.checkValidTopic, READ, the
    metadata cache, in that order)."""
    invalid = invalid_topic_reason(name)
    if invalid is not None:
        # ApiError.fromThrowable(InvalidTopicException) keeps the exception's message
        return ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {invalid}"
    if not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, name):
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED_MESSAGE
    if ctx.cluster.topic(name) is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_OR_PARTITION_MESSAGE
    return None
