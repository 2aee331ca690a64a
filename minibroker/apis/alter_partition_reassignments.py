"""AlterPartitionReassignments (45): set partitions' replica lists.

Versions 0-1: v1 adds AllowReplicationFactorChange, which lets a request refuse a change of replication factor.
Mirrors ControllerApis.handleAlterPartitionReassignments; here a reassignment completes at once.

Needs ALTER on the cluster; a refused request changes nothing and is answered as
AlterPartitionReassignmentsRequest.getErrorResponse answers it.
"""

from __future__ import annotations

from ..core.acls import AclOperation
from ..core.cluster_model import Partition
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse
from .context import RequestContext

API_KEY = 45
MIN_VERSION, MAX_VERSION = 0, 1

_Topic = AlterPartitionReassignmentsResponse.ReassignableTopicResponse
_Partition = _Topic.ReassignablePartitionResponse


def handle(request: AlterPartitionReassignmentsRequest, ctx: RequestContext) -> AlterPartitionReassignmentsResponse:
    if not ctx.authorize_cluster(AclOperation.ALTER):
        return _refused(request)
    allow_change = request.allow_replication_factor_change if ctx.api_version >= 1 else True
    topics = []
    for topic in request.topics:
        partitions = []
        for wanted in topic.partitions:
            code, message = ErrorCode.NONE, None
            try:
                partition = _partition(ctx, topic.name, wanted.partition_index)
                if wanted.replicas is None:
                    # a cancellation: every reassignment here has already completed; Kafka gives no message
                    raise KafkaError(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS)
                ctx.cluster.replication.reassign_replicas(partition, list(wanted.replicas), allow_change)
            except KafkaError as exc:
                code, message = exc.code, exc.message or None
            partitions.append(_Partition(partition_index=wanted.partition_index, error_code=code,
                                         error_message=message))
        topics.append(_Topic(name=topic.name, partitions=partitions))
    return AlterPartitionReassignmentsResponse(throttle_time_ms=0, allow_replication_factor_change=allow_change,
                                               error_code=0, error_message=None, responses=topics)


def _partition(ctx: RequestContext, topic_name: str, index: int) -> Partition:
    """The partition, or UNKNOWN_TOPIC_OR_PARTITION worded as ReplicationControlManager words it."""
    topic = ctx.cluster.topic(topic_name)
    if topic is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic_name}.")
    partition = topic.partition(index)
    if partition is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find partition {topic_name}:{index}.")
    return partition


def _refused(request: AlterPartitionReassignmentsRequest) -> AlterPartitionReassignmentsResponse:
    """CLUSTER_AUTHORIZATION_FAILED at the top and for every partition asked for.

    Kafka's message is its ClusterAuthorizationException's Java object dump; null lets the client show the
    error's own text. AllowReplicationFactorChange keeps its schema default.
    """
    code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    topics = [_Topic(name=topic.name, partitions=[_Partition(partition_index=wanted.partition_index, error_code=code,
                                                             error_message=None) for wanted in topic.partitions])
              for topic in request.topics]
    return AlterPartitionReassignmentsResponse(throttle_time_ms=0, allow_replication_factor_change=True,
                                               error_code=code, error_message=None, responses=topics)
