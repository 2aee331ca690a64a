"""OffsetForLeaderEpoch (23): the end offset of a leader epoch, for consumer log validation.

Versions 2-4, and v0-1 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0): v1 answers the
leader epoch; v2 adds the current leader epoch (fencing) and the throttle time; v3 the replica id; v4 is
flexible. v0-1 carry no current leader epoch (read as -1, so never fenced) and v0 answers without the leader
epoch; otherwise Kafka 3.9 answers them as v2. Mirrors KafkaApis.handleOffsetForLeaderEpochRequest and
ReplicaManager.lastOffsetForLeaderEpoch.

With an authorizer: CLUSTER_ACTION on the cluster covers every topic, whatever the replica id; without it each
topic needs DESCRIBE, else its partitions get TOPIC_AUTHORIZATION_FAILED, before an unknown topic is reported.
Refused topics come last in the answer.
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse
from .context import RequestContext

API_KEY = 23
MIN_VERSION, MAX_VERSION = 2, 4
PRE_KIP896_MIN_VERSION = 0  # releases before 4.0 served v0-1

_Topic = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult
_Partition = _Topic.EpochEndOffset


def handle(request: OffsetForLeaderEpochRequest, ctx: RequestContext) -> OffsetForLeaderEpochResponse:
    cluster = ctx.cluster
    topics = []
    names = [t.topic for t in request.topics]
    # Brokers (CLUSTER_ACTION) and, since KIP-320, consumers (DESCRIBE on the topic) use this API.
    describable = (set(names) if ctx.authorize_cluster(AclOperation.CLUSTER_ACTION)
                   else ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, names))
    refused = []
    for topic_req in request.topics:
        if topic_req.topic not in describable:
            refused.append(_Topic(topic=topic_req.topic, partitions=[
                _Partition(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, partition=p.partition)
                for p in topic_req.partitions]))
            continue
        partitions = []
        for part_req in topic_req.partitions:
            index = part_req.partition
            partition = cluster.find_partition(topic_req.topic, index)
            if partition is None:
                partitions.append(_Partition(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, partition=index))
                continue
            log = partition.log
            if partition.leader_id != ctx.node.node_id:
                code = ErrorCode.NOT_LEADER_OR_FOLLOWER
            elif part_req.current_leader_epoch > log.leader_epoch:
                code = ErrorCode.UNKNOWN_LEADER_EPOCH
            elif 0 <= part_req.current_leader_epoch < log.leader_epoch:
                code = ErrorCode.FENCED_LEADER_EPOCH
            else:
                epoch, end_offset = log.end_offset_for_epoch(part_req.leader_epoch)
                partitions.append(_Partition(error_code=0, partition=index, leader_epoch=epoch, end_offset=end_offset))
                continue
            partitions.append(_Partition(error_code=code, partition=index))
        topics.append(_Topic(topic=topic_req.topic, partitions=partitions))
    # KafkaApis.handleOffsetForLeaderEpochRequest: ReplicaManager.lastOffsetForLeaderEpoch's answers, then the
    # refused topics
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=topics + refused)
