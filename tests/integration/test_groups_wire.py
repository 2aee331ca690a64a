"""Consumer-group rules at the wire level: the coordinator's state machine and its refusals."""

from __future__ import annotations

import threading
import time

import pytest

from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)
from minibroker.testing.process import start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic, wait_until
from tests.integration.test_wire_protocol import create_topic

JOIN_V = 9
PROTOCOLS = [JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"\x00\x01meta")]


@pytest.fixture(scope="module")
def group_broker():
    process = start_broker("group.min.session.timeout.ms=100")
    yield process
    process.stop()


@pytest.fixture
def wire(group_broker):
    with WireClient(group_broker.host, group_broker.port) as client:
        yield client


def join(wire, group, member_id="", protocols=PROTOCOLS, session=10_000, rebalance=10_000, instance=None,
         version=JOIN_V):
    return wire.request(JoinGroupRequest(group_id=group, session_timeout_ms=session, rebalance_timeout_ms=rebalance,
                                         member_id=member_id, group_instance_id=instance, protocol_type="consumer",
                                         protocols=protocols), version)


def join_new(wire, group, **kwargs):
    """The KIP-394 dance: get a member id, then join with it."""
    first = join(wire, group, **kwargs)
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
    return join(wire, group, member_id=first.member_id, **kwargs)


def sync(wire, group, generation, member_id, assignments=(), protocol_type="consumer", protocol_name="range"):
    # v5 must name the protocol type and name (KIP-559): Kafka refuses null with INCONSISTENT_GROUP_PROTOCOL
    return wire.request(SyncGroupRequest(group_id=group, generation_id=generation, member_id=member_id,
                                         protocol_type=protocol_type, protocol_name=protocol_name,
                                         assignments=[SyncGroupRequest.SyncGroupRequestAssignment(
                                             member_id=m, assignment=a) for m, a in assignments]), 5)


def heartbeat(wire, group, generation, member_id):
    return wire.request(HeartbeatRequest(group_id=group, generation_id=generation, member_id=member_id), 4).error_code


def commit(wire, group, generation, member_id, topic, partition=0, offset=5, metadata="m"):
    request = OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=generation, member_id=member_id,
                                  topics=[OffsetCommitRequest.OffsetCommitRequestTopic(name=topic, partitions=[
                                      OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                                          partition_index=partition, committed_offset=offset,
                                          committed_metadata=metadata)])])
    return wire.request(request, 9).topics[0].partitions[0].error_code


def fetch_offset(wire, group, topic, partition=0):
    request = OffsetFetchRequest(groups=[OffsetFetchRequest.OffsetFetchRequestGroup(
        group_id=group, topics=[OffsetFetchRequest.OffsetFetchRequestGroup.OffsetFetchRequestTopics(
            name=topic, partition_indexes=[partition])])])
    result = wire.request(request, 9).groups[0]
    assert result.error_code == 0
    return result.topics[0].partitions[0]


def group_state(wire, group):
    return wire.request(DescribeGroupsRequest(groups=[group]), 5).groups[0].group_state


def stable_single_member(wire, group):
    joined = join_new(wire, group)
    assert joined.error_code == 0 and joined.leader == joined.member_id
    synced = sync(wire, group, joined.generation_id, joined.member_id, [(joined.member_id, b"assignment")])
    assert synced.error_code == 0 and synced.assignment == b"assignment"
    return joined


def test_find_coordinator_for_groups_and_transactions(wire, group_broker):
    single = wire.request(FindCoordinatorRequest(key="g", key_type=0), 3)
    # v1-3 carry Errors.message(), which for NONE is the enum's name
    assert (single.error_code, single.error_message, single.port) == (0, "NONE", group_broker.port)
    batched = wire.request(FindCoordinatorRequest(key_type=1, coordinator_keys=["a", "b"]), 4)
    assert [(c.key, c.error_code, c.port) for c in batched.coordinators] == [
        ("a", 0, group_broker.port), ("b", 0, group_broker.port)]
    assert wire.request(FindCoordinatorRequest(key="g", key_type=7), 3).error_code == ErrorCode.INVALID_REQUEST


def test_single_member_joins_at_once_and_is_stable(wire):
    group = unique_topic("g")
    started = time.monotonic()
    joined = stable_single_member(wire, group)
    assert time.monotonic() - started < 1.0  # test brokers have no initial rebalance delay (TEST_BROKER_CONFIG)
    assert joined.generation_id == 1 and joined.protocol_name == "range"
    assert [m.member_id for m in joined.members] == [joined.member_id]
    assert heartbeat(wire, group, 1, joined.member_id) == 0
    described = wire.request(DescribeGroupsRequest(groups=[group]), 5).groups[0]
    assert (described.group_state, described.protocol_data) == ("Stable", "range")
    assert described.members[0].member_assignment == b"assignment"
    assert described.members[0].client_host == "/127.0.0.1"


def test_join_before_v4_needs_no_member_id_round_trip(wire):
    joined = join(wire, unique_topic("g"), version=3)
    assert joined.error_code == 0 and joined.member_id


def test_second_member_triggers_rebalance_and_both_join_next_generation(group_broker, wire):
    group = unique_topic("g")
    first = stable_single_member(wire, group)
    results = {}
    with WireClient(group_broker.host, group_broker.port) as other:
        second_id = join(other, group).member_id
        thread = threading.Thread(target=lambda: results.update(second=join(other, group, member_id=second_id)))
        thread.start()
        wait_until(lambda: group_state(wire, group) == "PreparingRebalance", 10, "the second join arrived")
        assert heartbeat(wire, group, 1, first.member_id) == ErrorCode.REBALANCE_IN_PROGRESS
        rejoined = join(wire, group, member_id=first.member_id)
        thread.join(5)
    second = results["second"]
    assert rejoined.generation_id == second.generation_id == 2
    assert rejoined.leader == first.member_id
    assert sorted(m.member_id for m in rejoined.members) == sorted([first.member_id, second_id])
    assert second.members == []  # only the leader sees the members


def test_wrong_generation_unknown_member_and_commit_checks(wire):
    group = unique_topic("g")
    topic = unique_topic("t")
    create_topic(wire, topic)
    member = stable_single_member(wire, group)
    assert heartbeat(wire, group, 7, member.member_id) == ErrorCode.ILLEGAL_GENERATION
    assert heartbeat(wire, group, 1, "nobody") == ErrorCode.UNKNOWN_MEMBER_ID
    assert sync(wire, group, 7, member.member_id).error_code == ErrorCode.ILLEGAL_GENERATION
    assert commit(wire, group, 7, member.member_id, topic) == ErrorCode.ILLEGAL_GENERATION
    assert commit(wire, group, 1, "nobody", topic) == ErrorCode.UNKNOWN_MEMBER_ID
    assert commit(wire, group, 1, member.member_id, topic, partition=9) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert commit(wire, group, 1, member.member_id, "no-such-topic") == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert commit(wire, group, 1, member.member_id, topic, metadata="x" * 5000) == \
        ErrorCode.OFFSET_METADATA_TOO_LARGE
    assert commit(wire, group, 1, member.member_id, topic, offset=42) == 0
    stored = fetch_offset(wire, group, topic)
    assert (stored.committed_offset, stored.metadata) == (42, "m")
    assert heartbeat(wire, "no-such-group", 1, member.member_id) == ErrorCode.UNKNOWN_MEMBER_ID


def test_join_refusals(wire):
    group = unique_topic("g")
    assert join(wire, group, protocols=[]).error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert join(wire, "", protocols=PROTOCOLS).error_code == ErrorCode.INVALID_GROUP_ID
    assert join(wire, group, session=10).error_code == ErrorCode.INVALID_SESSION_TIMEOUT
    huge = [JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"x" * 1_100_000)]
    assert join(wire, group, protocols=huge).error_code == ErrorCode.UNKNOWN_SERVER_ERROR
    assert join(wire, group, member_id="made-up").error_code == ErrorCode.UNKNOWN_MEMBER_ID
    stable_single_member(wire, group)
    other = [JoinGroupRequest.JoinGroupRequestProtocol(name="roundrobin", metadata=b"")]
    assert join(wire, group, protocols=other).error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    # the group is undisturbed
    assert wire.request(DescribeGroupsRequest(groups=[group]), 5).groups[0].group_state == "Stable"


def test_sync_group_v5_without_protocol_type_or_name_is_refused_and_assigns_nothing(wire):
    group = unique_topic("g")
    joined = join_new(wire, group)
    for protocol_type, protocol_name in ((None, "range"), ("consumer", None)):
        refused = sync(wire, group, joined.generation_id, joined.member_id, [(joined.member_id, b"a")],
                       protocol_type=protocol_type, protocol_name=protocol_name)
        assert (refused.error_code, refused.assignment) == (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, b"")
    assert wire.request(DescribeGroupsRequest(groups=[group]), 5).groups[0].group_state == "CompletingRebalance"
    assert sync(wire, group, joined.generation_id, joined.member_id, [(joined.member_id, b"a")]).assignment == b"a"


def test_session_timeout_removes_a_silent_member(wire):
    group = unique_topic("g")
    member = join_new(wire, group, session=300)
    sync(wire, group, member.generation_id, member.member_id, [(member.member_id, b"a")])
    wait_until(lambda: group_state(wire, group) == "Empty", 10, "the silent member's session expired")
    assert heartbeat(wire, group, member.generation_id, member.member_id) == ErrorCode.UNKNOWN_MEMBER_ID
    assert wire.request(DescribeGroupsRequest(groups=[group]), 5).groups[0].group_state == "Empty"


def test_leave_group_and_delete_groups(wire):
    group = unique_topic("g")
    topic = unique_topic("t")
    create_topic(wire, topic)
    member = stable_single_member(wire, group)
    assert commit(wire, group, 1, member.member_id, topic) == 0
    deleted = wire.request(DeleteGroupsRequest(groups_names=[group, "no-such-group"]), 2).results
    assert [r.error_code for r in deleted] == [ErrorCode.NON_EMPTY_GROUP, ErrorCode.GROUP_ID_NOT_FOUND]
    left = wire.request(LeaveGroupRequest(group_id=group, members=[
        LeaveGroupRequest.MemberIdentity(member_id=member.member_id), LeaveGroupRequest.MemberIdentity(
            member_id="nobody")]), 5)
    assert [m.error_code for m in left.members] == [0, ErrorCode.UNKNOWN_MEMBER_ID]
    listed = wire.request(ListGroupsRequest(states_filter=["Empty"], types_filter=[]), 5).groups
    assert group in [g.group_id for g in listed]
    assert fetch_offset(wire, group, topic).committed_offset == 5
    assert wire.request(DeleteGroupsRequest(groups_names=[group]), 2).results[0].error_code == 0
    assert fetch_offset(wire, group, topic).committed_offset == -1
    gone = wire.request(DescribeGroupsRequest(groups=[group]), 6).groups[0]
    assert gone.error_code == ErrorCode.GROUP_ID_NOT_FOUND
    assert wire.request(DescribeGroupsRequest(groups=[group]), 5).groups[0].group_state == "Dead"


def test_static_member_rejoins_without_rebalance(wire):
    group = unique_topic("g")
    first = join(wire, group, instance="instance-1")  # static members skip MEMBER_ID_REQUIRED
    assert first.error_code == 0
    sync(wire, group, first.generation_id, first.member_id, [(first.member_id, b"mine")])
    again = join(wire, group, instance="instance-1")  # restarted: no member id
    assert again.error_code == 0
    assert again.generation_id == first.generation_id  # no new generation
    assert again.member_id != first.member_id and again.skip_assignment
    assert sync(wire, group, again.generation_id, again.member_id).assignment == b"mine"
    assert heartbeat(wire, group, first.generation_id, first.member_id) == ErrorCode.UNKNOWN_MEMBER_ID
    fenced = wire.request(HeartbeatRequest(group_id=group, generation_id=first.generation_id,
                                           member_id=first.member_id, group_instance_id="instance-1"), 4)
    assert fenced.error_code == ErrorCode.FENCED_INSTANCE_ID


def test_simple_commit_without_membership_and_offset_delete(wire):
    group = unique_topic("g")
    topic = unique_topic("t")
    create_topic(wire, topic, partitions=2)
    assert commit(wire, group, -1, "", topic, partition=1, offset=7) == 0
    assert fetch_offset(wire, group, topic, 1).committed_offset == 7
    request = OffsetDeleteRequest(group_id=group, topics=[OffsetDeleteRequest.OffsetDeleteRequestTopic(
        name=topic, partitions=[OffsetDeleteRequest.OffsetDeleteRequestTopic.OffsetDeleteRequestPartition(
            partition_index=1)])])
    response = wire.request(request, 0)
    assert response.error_code == 0 and response.topics[0].partitions[0].error_code == 0
    assert fetch_offset(wire, group, topic, 1).committed_offset == -1
    missing = OffsetDeleteRequest(group_id="no-such-group", topics=[])
    assert wire.request(missing, 0).error_code == ErrorCode.GROUP_ID_NOT_FOUND


def test_offset_fetch_v1_to_v7_all_partitions(wire):
    group = unique_topic("g")
    topic = unique_topic("t")
    create_topic(wire, topic, partitions=2)
    assert commit(wire, group, -1, "", topic, partition=0, offset=3) == 0
    assert commit(wire, group, -1, "", topic, partition=1, offset=4) == 0
    everything = wire.request(OffsetFetchRequest(group_id=group, topics=None), 7)
    assert everything.error_code == 0
    assert sorted((p.partition_index, p.committed_offset) for p in everything.topics[0].partitions) == [(0, 3), (1, 4)]
    one = wire.request(OffsetFetchRequest(group_id=group, topics=[OffsetFetchRequest.OffsetFetchRequestTopic(
        name=topic, partition_indexes=[1])]), 1)
    assert one.topics[0].partitions[0].committed_offset == 4
