"""DescribeLogDirs (35): the one log directory of this node and the size of each partition in it.

Versions 1-5, and v0 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0; v1 is v0 with quota
throttling): v2 is flexible; v3 adds the top-level error code; v4 the volume's total and usable bytes; v5
IsCordoned (never: nothing cordons a directory here). Mirrors KafkaApis.handleDescribeLogDirsRequest and
ReplicaManager.describeLogDirs.

A caller that may not DESCRIBE the cluster gets no log directory and, from v3, CLUSTER_AUTHORIZATION_FAILED;
otherwise one entry per log directory with error NONE, holding the topics whose partitions this node hosts
(only the requested ones, or all when `topics` is null; a topic left with no partition is left out), each
partition's size in bytes, offset lag max(HW - LEO, 0) and isFutureKey false (no AlterReplicaLogDirs here).
"""

from __future__ import annotations

import os

from ..core.acls import AclOperation
from ..protocol.errors import ErrorCode
from ..protocol.messages import DescribeLogDirsRequest, DescribeLogDirsResponse
from .context import RequestContext

API_KEY = 35
MIN_VERSION, MAX_VERSION = 1, 5  # v0 went in Kafka 4.0 (KIP-896)
PRE_KIP896_MIN_VERSION = 0  # releases before 4.0 served v0

# Kafka's default `log.dir`. The log is kept in memory; this is the name it is described under.
LOG_DIR = "/tmp/kafka-logs"
UNKNOWN_VOLUME_BYTES = -1  # DescribeLogDirsResponse.UNKNOWN_VOLUME_BYTES

_Result = DescribeLogDirsResponse.DescribeLogDirsResult
_Topic = _Result.DescribeLogDirsTopic
_Partition = _Topic.DescribeLogDirsPartition


def volume_bytes() -> tuple[int, int]:
    """(total, usable) bytes of the volume the log lives on, which is memory; -1 where the OS does not say."""
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        return page * os.sysconf("SC_PHYS_PAGES"), page * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError):  # a name this OS lacks (SC_AVPHYS_PAGES on macOS)
        return UNKNOWN_VOLUME_BYTES, UNKNOWN_VOLUME_BYTES


def handle(request: DescribeLogDirsRequest, ctx: RequestContext) -> DescribeLogDirsResponse:
    if not ctx.authorize_cluster(AclOperation.DESCRIBE):
        # before v3 the response has no error code: the refusal is only the empty result
        return DescribeLogDirsResponse(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                       results=[])
    wanted = None if request.topics is None else {
        (topic.topic, index) for topic in request.topics for index in topic.partitions}
    topics = []
    for topic in sorted(ctx.cluster.all_topics(), key=lambda t: t.name):
        name = topic.name
        partitions = [
            _Partition(partition_index=partition.index, partition_size=partition.log.size_bytes,
                       # one shared log: every replica has the leader's end offset, so the lag is 0
                       offset_lag=max(partition.log.high_watermark - partition.log.log_end_offset, 0),
                       is_future_key=False)
            for partition in topic.partitions
            if ctx.node.node_id in partition.replicas and (wanted is None or (name, partition.index) in wanted)
        ]
        if partitions:
            topics.append(_Topic(name=name, partitions=partitions))
    total, usable = volume_bytes()
    result = _Result(error_code=ErrorCode.NONE, log_dir=LOG_DIR, topics=topics, total_bytes=total,
                     usable_bytes=usable, is_cordoned=False)
    return DescribeLogDirsResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, results=[result])
