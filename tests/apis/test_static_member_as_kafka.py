"""A classic group's static member (KIP-345) checked as ClassicGroup.validateMember checks it: an instance id
the group does not know is UNKNOWN_MEMBER_ID, before the member id is looked up (differential scenario
group_static_member, step v3-heartbeat-other-instance)."""

from __future__ import annotations

from typing import Any

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import HeartbeatRequest, JoinGroupRequest, OffsetCommitRequest, SyncGroupRequest
from tests.apis.authz import NOW, call


def static_member() -> tuple[Cluster, str, int]:
    """A one-node cluster whose group g has one static member of instance i1, synced."""
    c = Cluster(BrokerConfig({"node.id": 1, "group.initial.rebalance.delay.ms": 0}), clock=ManualClock(NOW))
    c.create_topic("t", 1, 1)
    join = JoinGroupRequest(group_id="g", session_timeout_ms=30000, rebalance_timeout_ms=60000, member_id="",
                            group_instance_id="i1", protocol_type="consumer", reason=None,
                            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")])
    joined = call(c, join, 7)
    assert joined.error_code == 0
    sync = SyncGroupRequest(group_id="g", generation_id=joined.generation_id, member_id=joined.member_id,
                            group_instance_id="i1", protocol_type="consumer", protocol_name="range", assignments=[])
    assert call(c, sync, 5).error_code == 0
    return c, joined.member_id, joined.generation_id


def heartbeat(c: Cluster, member: str, generation: int, instance: str | None) -> Any:
    return call(c, HeartbeatRequest(group_id="g", generation_id=generation, member_id=member,
                                    group_instance_id=instance), 4).error_code


def test_a_heartbeat_naming_an_unknown_instance_is_unknown_member() -> None:
    c, member, generation = static_member()
    assert heartbeat(c, member, generation, "other") == ErrorCode.UNKNOWN_MEMBER_ID
    assert heartbeat(c, member, generation, "i1") == ErrorCode.NONE
    assert heartbeat(c, member, generation, None) == ErrorCode.NONE


def test_a_sync_naming_an_unknown_instance_is_unknown_member() -> None:
    c, member, generation = static_member()
    sync = SyncGroupRequest(group_id="g", generation_id=generation, member_id=member, group_instance_id="other",
                            protocol_type="consumer", protocol_name="range", assignments=[])
    assert call(c, sync, 5).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_an_offset_commit_naming_an_unknown_instance_is_unknown_member() -> None:
    c, member, generation = static_member()
    Topic = OffsetCommitRequest.OffsetCommitRequestTopic
    commit = OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=generation, member_id=member,
                                 group_instance_id="other", topics=[Topic(name="t", partitions=[
                                     Topic.OffsetCommitRequestPartition(partition_index=0, committed_offset=1,
                                                                        committed_leader_epoch=-1,
                                                                        committed_metadata="")])])
    assert call(c, commit, 9).topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_MEMBER_ID
