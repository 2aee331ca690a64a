"""AlterReplicaLogDirs (34): move replicas hosted by this node to another of its log directories.

Versions 1-2, and v0 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0): v0 is v1 without
quota throttling; v2 is v1 made flexible. Mirrors KafkaApis.handleAlterReplicaLogDirsRequest and
ReplicaManager.alterReplicaLogDirs.

A node has one log directory, the one DescribeLogDirs names (describe_log_dirs.LOG_DIR), so the only move
there is to the directory a replica is already in: NONE. Per partition, as Kafka answers: a path that is
not one of the node's log directories (compared as given: relative, trailing slash) LOG_DIR_NOT_FOUND,
checked first; then a partition this node does not host (unknown topic or index, a replica on another
node) UNKNOWN_TOPIC_OR_PARTITION. A partition named twice is answered once, for the last directory
naming it (Kafka reads the request into a map). Needs ALTER on the cluster; a refused request moves
nothing and every partition is answered CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation
from ..protocol.errors import ErrorCode
from ..protocol.messages import AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse
from .context import RequestContext
from .describe_log_dirs import LOG_DIR

API_KEY = 34
MIN_VERSION, MAX_VERSION = 1, 2
PRE_KIP896_MIN_VERSION = 0  # releases before 4.0 served v0: v1 without quota throttling, which no move here needs

_TopicResult = AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult
_PartitionResult = _TopicResult.AlterReplicaLogDirPartitionResult


def handle(request: AlterReplicaLogDirsRequest, ctx: RequestContext) -> AlterReplicaLogDirsResponse:
    # AlterReplicaLogDirsRequest.partitionDirs: (topic, partition) -> directory, a later entry replacing an earlier one
    destinations: dict[tuple[str, int], str] = {}
    for directory in request.dirs:
        for topic in directory.topics:
            for index in topic.partitions:
                destinations[(topic.name, index)] = directory.path
    allowed = ctx.authorize_cluster(AclOperation.ALTER)
    by_topic: dict[str, list[Any]] = {}
    for (name, index), path in destinations.items():
        code = _move(ctx, name, index, path) if allowed else ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        by_topic.setdefault(name, []).append(_PartitionResult(partition_index=index, error_code=code))
    results = [_TopicResult(topic_name=name, partitions=partitions) for name, partitions in by_topic.items()]
    return AlterReplicaLogDirsResponse(throttle_time_ms=0, results=results)


def _move(ctx: RequestContext, name: str, index: int, path: str) -> ErrorCode:
    """The answer for one replica: LogManager.isLogDirOnline, then the partition this node hosts."""
    if path != LOG_DIR:
        return ErrorCode.LOG_DIR_NOT_FOUND
    if ctx.cluster.hosted_partition(ctx.node.node_id, name, index) is None:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return ErrorCode.NONE  # already in the one log directory: nothing to move
