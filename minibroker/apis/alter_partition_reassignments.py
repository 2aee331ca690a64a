"""AlterPartitionReassignments (45): set partitions' replica lists; a reassignment completes at once."""

from __future__ import annotations

from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse
from .context import RequestContext

API_KEY = 45
MIN_VERSION, MAX_VERSION = 0, 1

_Topic = AlterPartitionReassignmentsResponse.ReassignableTopicResponse
_Partition = _Topic.ReassignablePartitionResponse


def handle(request: AlterPartitionReassignmentsRequest, ctx: RequestContext) -> AlterPartitionReassignmentsResponse:
    allow_change = request.allow_replication_factor_change if ctx.api_version >= 1 else True
    topics = []
    for topic in request.topics:
        partitions = []
        for wanted in topic.partitions:
            code, message = ErrorCode.NONE, None
            try:
                partition = ctx.cluster.partition(topic.name, wanted.partition_index)
                if wanted.replicas is None:
                    # a cancellation: every reassignment here has already completed
                    raise KafkaError(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
                                     f"Unable to cancel reassignment for {partition.name}: "
                                     f"there is no reassignment in progress.")
                ctx.cluster.reassign_replicas(partition, list(wanted.replicas), allow_change)
            except KafkaError as exc:
                code, message = exc.code, exc.message or None
            partitions.append(_Partition(partition_index=wanted.partition_index, error_code=code,
                                         error_message=message))
        topics.append(_Topic(name=topic.name, partitions=partitions))
    return AlterPartitionReassignmentsResponse(throttle_time_ms=0, allow_replication_factor_change=allow_change,
                                               error_code=0, error_message=None, responses=topics)
