"""ConsumerGroupHeartbeat and ConsumerGroupDescribe on the wire, with a manual clock: what a client reads."""

from __future__ import annotations

from typing import Any

from minibroker.apis import advertised_ranges
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
    DescribeGroupsRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
)

from .authz import Op, Type, allow, call, secured_cluster

TP = ConsumerGroupHeartbeatRequest.TopicPartitions


def plain_cluster(**configs: Any) -> Cluster:
    cluster = Cluster(BrokerConfig({"node.id": 1, **configs}), clock=ManualClock(1_700_000_000_000))
    cluster.create_topic("t", 4)
    return cluster


def hb(member: str, epoch: int, owned: list[Any] | None = None, group: str = "g", **fields: Any) -> Any:
    values: dict[str, Any] = dict(group_id=group, member_id=member, member_epoch=epoch, instance_id=None,
                                  rack_id=None, rebalance_timeout_ms=-1, subscribed_topic_names=None,
                                  subscribed_topic_regex=None, server_assignor=None, topic_partitions=owned)
    if epoch == 0:
        values.update(rebalance_timeout_ms=30_000, subscribed_topic_names=["t"], topic_partitions=[])
    values.update(fields)
    return ConsumerGroupHeartbeatRequest(**values)


def owned_of(cluster: Cluster, response: Any) -> list[Any]:
    return [TP(topic_id=tp.topic_id, partitions=list(tp.partitions)) for tp in response.assignment.topic_partitions]


def partitions(response: Any) -> set[int]:
    return {p for tp in response.assignment.topic_partitions for p in tp.partitions}


def test_first_heartbeat_answers_the_whole_assignment():
    cluster = plain_cluster()
    answer = call(cluster, hb("m1", 0), 1)
    assert (answer.error_code, answer.member_id, answer.member_epoch) == (0, "m1", 1)
    assert answer.heartbeat_interval_ms == 5000
    topic_id = cluster.topics["t"].topic_id
    assert [(tp.topic_id, sorted(tp.partitions)) for tp in answer.assignment.topic_partitions] == \
        [(topic_id, [0, 1, 2, 3])]


def test_v0_member_id_is_given_by_the_coordinator_and_v1_requires_one():
    cluster = plain_cluster()
    answer = call(cluster, hb("", 0), 0)
    assert answer.error_code == 0 and len(answer.member_id) == 22
    refused = call(cluster, hb("", 0), 1)
    assert (refused.error_code, refused.error_message) == (ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")


def test_partitions_move_only_after_revocation():
    cluster = plain_cluster()
    first = call(cluster, hb("a", 0), 1)
    second = call(cluster, hb("b", 0), 1)
    assert second.member_epoch == 2 and partitions(second) == set()
    revoke = call(cluster, hb("a", 1, owned_of(cluster, first)), 1)
    kept = partitions(revoke)
    assert revoke.member_epoch == 1 and len(kept) == 2
    assert call(cluster, hb("b", 2, []), 1).assignment is None  # still owned by a
    done = call(cluster, hb("a", 1, owned_of(cluster, revoke)), 1)
    assert done.member_epoch == 2
    given = call(cluster, hb("b", 2, []), 1)
    assert partitions(given) == {0, 1, 2, 3} - kept


def test_fenced_and_unknown_members():
    cluster = plain_cluster()
    call(cluster, hb("a", 0), 1)
    fenced = call(cluster, hb("a", 7), 1)
    assert fenced.error_code == ErrorCode.FENCED_MEMBER_EPOCH
    assert fenced.error_message.startswith("The consumer group member has a greater member epoch (7)")
    unknown = call(cluster, hb("x", 1), 1)
    assert (unknown.error_code, unknown.error_message) == (ErrorCode.UNKNOWN_MEMBER_ID,
                                                           "Member x is not a member of group g.")


def test_session_timeout_on_the_manual_clock():
    cluster = plain_cluster(**{"group.consumer.session.timeout.ms": 45_000})
    call(cluster, hb("a", 0), 1)
    cluster.clock.advance(30_000)  # type: ignore[attr-defined]
    call(cluster, hb("b", 0), 1)
    cluster.clock.advance(15_000)  # type: ignore[attr-defined]
    cluster.tick()
    assert call(cluster, hb("a", 1), 1).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert call(cluster, hb("b", 2), 1).error_code == 0


def test_static_member_leave_and_return():
    cluster = plain_cluster()
    first = call(cluster, hb("a", 0, instance_id="i"), 1)
    left = call(cluster, hb("a", -2, instance_id="i"), 1)
    assert (left.error_code, left.member_epoch) == (0, -2)
    back = call(cluster, hb("a2", 0, instance_id="i"), 1)
    assert back.member_epoch == first.member_epoch and partitions(back) == {0, 1, 2, 3}
    assert call(cluster, hb("a3", 0, instance_id="i"), 1).error_code == ErrorCode.UNRELEASED_INSTANCE_ID


def test_regex_subscription_with_a_new_topic():
    cluster = plain_cluster()
    answer = call(cluster, hb("a", 0, subscribed_topic_names=None, subscribed_topic_regex="or.*"), 1)
    assert answer.assignment.topic_partitions == []
    cluster.create_topic("orders", 2)
    later = call(cluster, hb("a", answer.member_epoch, []), 1)
    assert partitions(later) == {0, 1} and later.member_epoch == answer.member_epoch + 1


def test_disabled_consumer_protocol_is_not_served_and_old_profiles_advertise_what_their_release_did():
    cluster = plain_cluster(**{"group.coordinator.rebalance.protocols": "classic"})
    assert call(cluster, hb("a", 0), 1).error_code == ErrorCode.UNSUPPORTED_VERSION
    keys = {key for key, _, _ in advertised_ranges("2.8")}
    assert 68 not in keys and 69 not in keys
    # Kafka 3.9.1 advertised KIP-848's early-access v0 with the consumer protocol off
    assert {(k, lo, hi) for k, lo, hi in advertised_ranges("3.9") if k in (68, 69)} == {(68, 0, 0), (69, 0, 0)}
    assert {(k, lo, hi) for k, lo, hi in advertised_ranges("4.0") if k in (68, 69)} == {(68, 0, 1), (69, 0, 1)}


def test_describe_consumer_group_and_cross_protocol_answers():
    cluster = plain_cluster()
    call(cluster, hb("a", 0, rack_id="r1"), 1)
    described = call(cluster, ConsumerGroupDescribeRequest(group_ids=["g", "nope"],
                                                           include_authorized_operations=False), 1)
    group, missing = described.groups
    assert (group.error_code, group.group_state, group.group_epoch, group.assignment_epoch, group.assignor_name) == \
        (0, "Stable", 1, 1, "uniform")
    member = group.members[0]
    assert (member.member_id, member.rack_id, member.member_epoch, member.member_type) == ("a", "r1", 1, 1)
    assert [(tp.topic_name, sorted(tp.partitions)) for tp in member.assignment.topic_partitions] == \
        [("t", [0, 1, 2, 3])]
    assert (missing.error_code, missing.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found.")
    classic = call(cluster, DescribeGroupsRequest(groups=["g"], include_authorized_operations=False), 6)
    assert (classic.groups[0].error_code, classic.groups[0].error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a classic group.")
    listed = call(cluster, ListGroupsRequest(states_filter=[], types_filter=["consumer"]), 5)
    assert [(g.group_id, g.group_type, g.group_state, g.protocol_type) for g in listed.groups] == \
        [("g", "consumer", "Stable", "consumer")]


def test_offset_commit_and_fetch_with_member_epochs():
    cluster = plain_cluster()
    call(cluster, hb("a", 0), 1)
    call(cluster, hb("b", 0), 1)
    topic_id = cluster.topics["t"].topic_id

    def commit(epoch: int) -> int:
        request = OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=epoch, member_id="a",
                                      group_instance_id=None, retention_time_ms=-1, topics=[
                                          OffsetCommitRequest.OffsetCommitRequestTopic(
                                              name="t", topic_id=topic_id, partitions=[
                                                  OffsetCommitRequest.OffsetCommitRequestTopic
                                                  .OffsetCommitRequestPartition(
                                                      partition_index=0, committed_offset=5,
                                                      committed_leader_epoch=-1, committed_metadata="")])])
        return call(cluster, request, 9).topics[0].partitions[0].error_code

    assert commit(1) == 0
    assert commit(0) == ErrorCode.STALE_MEMBER_EPOCH
    assert commit(2) == ErrorCode.FENCED_MEMBER_EPOCH
    group = OffsetFetchRequest.OffsetFetchRequestGroup
    fetch = OffsetFetchRequest(groups=[group(group_id="g", member_id="b", member_epoch=1, topics=None)],
                               require_stable=False)
    assert call(cluster, fetch, 9).groups[0].error_code == ErrorCode.STALE_MEMBER_EPOCH
    fetch.groups[0].member_epoch = 2
    answer = call(cluster, fetch, 9).groups[0]
    assert answer.error_code == 0 and answer.topics[0].partitions[0].committed_offset == 5


def test_heartbeat_needs_read_on_the_group_and_describe_on_its_topics():
    cluster = secured_cluster()
    cluster.create_topic("seen", 1)
    cluster.create_topic("hidden", 1)
    denied = call(cluster, hb("a", 0, subscribed_topic_names=None, subscribed_topic_regex=".*"), 1)
    assert denied.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    allow(cluster, "User:alice", Op.READ, Type.GROUP, "g")
    allow(cluster, "User:alice", Op.DESCRIBE, Type.TOPIC, "seen")
    answer = call(cluster, hb("a", 0, subscribed_topic_names=None, subscribed_topic_regex=".*"), 1)
    assert answer.error_code == 0
    seen = cluster.topics["seen"].topic_id
    assert [tp.topic_id for tp in answer.assignment.topic_partitions] == [seen]
    by_name = call(cluster, hb("b", 0, subscribed_topic_names=["seen", "hidden"]), 1)
    assert by_name.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    describe = ConsumerGroupDescribeRequest(group_ids=["g"], include_authorized_operations=True)
    assert call(cluster, describe, 1, principal="User:bob").groups[0].error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    allow(cluster, "User:bob", Op.DESCRIBE, Type.GROUP, "g")
    described = call(cluster, describe, 1, principal="User:bob").groups[0]
    assert described.error_code == 0 and described.authorized_operations == 1 << Op.DESCRIBE



def test_consumer_group_describe_tells_classic_members_from_consumer_members():
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    from minibroker.protocol.messages import JoinGroupRequest

    cluster = plain_cluster()
    assert call(cluster, hb("b", 0), 1).error_code == 0
    subscription = bytes(ConsumerProtocolSubscription(version=0, topics=["t"], user_data=None).encode(version=0))
    joined = call(cluster, JoinGroupRequest(
        group_id="g", session_timeout_ms=30_000, rebalance_timeout_ms=30_000, member_id="", protocol_type="consumer",
        protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=subscription)]), 3)
    assert joined.error_code == 0  # a classic member inside the consumer group (KIP-848 online migration)
    described = call(cluster, ConsumerGroupDescribeRequest(group_ids=["g"], include_authorized_operations=False), 1)
    types = {m.member_id: m.member_type for m in described.groups[0].members}
    assert types == {"b": 1, joined.member_id: 0}
