"""ElectLeaders (43): make partitions' preferred (first) replicas their leaders.

Versions 0-2: v1 adds the election type (KIP-460) and a top-level error code; v2 is flexible. Mirrors
ControllerApis.handleElectLeaders.

Needs ALTER on the cluster; a refused request elects nothing and is answered as
ElectLeadersRequest.getErrorResponse answers it.
"""

from __future__ import annotations

from ..core.acls import AclOperation
from ..core.cluster import Cluster
from ..core.cluster_model import Partition
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import ElectLeadersRequest, ElectLeadersResponse
from .context import RequestContext

API_KEY = 43
MIN_VERSION, MAX_VERSION = 0, 2

PREFERRED, UNCLEAN = 0, 1
_Result = ElectLeadersResponse.ReplicaElectionResult
_PartitionResult = _Result.PartitionResult


def handle(request: ElectLeadersRequest, ctx: RequestContext) -> ElectLeadersResponse:
    if not ctx.authorize_cluster(AclOperation.ALTER):
        return _refused(request)
    cluster = ctx.cluster
    election_type = request.election_type if ctx.api_version >= 1 else PREFERRED
    if election_type not in (PREFERRED, UNCLEAN):
        # Kafka fails the whole request (ElectLeadersRequest.getErrorResponse), naming every partition asked for
        return _refused(request, ErrorCode.INVALID_REQUEST, f"Unknown election type {election_type}")
    every_partition = request.topic_partitions is None
    if every_partition:
        wanted = [(name, list(range(count))) for name, count in sorted(cluster.partition_counts().items())]
    else:
        wanted = [(entry.topic, list(entry.partitions)) for entry in request.topic_partitions]
    results = []
    for topic_name, indexes in wanted:
        partition_results = []
        for index in indexes:
            code, message = ErrorCode.NONE, None
            try:
                partition = _partition(cluster, topic_name, index)
                if election_type == UNCLEAN:
                    _unclean(partition)
                else:
                    cluster.replication.elect_preferred_leader(partition)
            except KafkaError as exc:
                code, message = exc.code, exc.message or None
            if every_partition and code == ErrorCode.ELECTION_NOT_NEEDED:
                continue  # as Kafka: electing everything reports only what changed
            partition_results.append(_PartitionResult(partition_id=index, error_code=code, error_message=message))
        if partition_results or not every_partition:
            results.append(_Result(topic=topic_name, partition_result=partition_results))
    return ElectLeadersResponse(throttle_time_ms=0, error_code=0, replica_election_results=results)


def _partition(cluster: Cluster, topic_name: str, index: int) -> Partition:
    """The partition, or UNKNOWN_TOPIC_OR_PARTITION worded as ReplicationControlManager.electLeader words it."""
    topic = cluster.topic(topic_name)
    if topic is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic_name}")
    partition = topic.partition(index)
    if partition is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic_name}-{index}")
    return partition


def _refused(request: ElectLeadersRequest, code: int = ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
             message: str | None = None) -> ElectLeadersResponse:
    """`code` at the top (v1+) and for every partition asked for, none when all were.

    For CLUSTER_AUTHORIZATION_FAILED Kafka's message is its ClusterAuthorizationException's Java object dump;
    null lets the client show the error's own text.
    """
    results = [_Result(topic=entry.topic, partition_result=[
                   _PartitionResult(partition_id=index, error_code=code, error_message=message)
                   for index in entry.partitions])
               for entry in request.topic_partitions or ()]
    return ElectLeadersResponse(throttle_time_ms=0, error_code=code, replica_election_results=results)


def _unclean(partition: Partition) -> None:
    # every replica is in sync and alive, so a partition always has a leader and never needs an unclean one
    raise KafkaError(ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")
