"""What the consumer-group APIs authorize, as KafkaApis does: refusals carry Kafka's codes and change nothing."""

from __future__ import annotations

from typing import Any

from minibroker.core.acls import AclOperation
from minibroker.core.cluster import Cluster
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    SyncGroupRequest,
)

from .authz import ADMIN, Op, Pattern, Type, allow, call, deny, secured_cluster, unknown_topic_id
from .authz import offset_commit as commit

ALICE, BOB = "User:alice", "User:bob"
GAF = ErrorCode.GROUP_AUTHORIZATION_FAILED
TAF = ErrorCode.TOPIC_AUTHORIZATION_FAILED


# -- request builders ---------------------------------------------------------------------------------------

def join(group: str, member_id: str = "") -> Any:
    return JoinGroupRequest(group_id=group, session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
                            member_id=member_id, group_instance_id=None, protocol_type="consumer",
                            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"meta")])


def sync(group: str, generation: int, member_id: str, assignment: bytes | None = None) -> Any:
    assignments = [] if assignment is None else [
        SyncGroupRequest.SyncGroupRequestAssignment(member_id=member_id, assignment=assignment)]
    return SyncGroupRequest(group_id=group, generation_id=generation, member_id=member_id, group_instance_id=None,
                            protocol_type="consumer", protocol_name="range", assignments=assignments)


def heartbeat(group: str, generation: int, member_id: str) -> Any:
    return HeartbeatRequest(group_id=group, generation_id=generation, member_id=member_id, group_instance_id=None)


def leave(group: str, member_id: str) -> Any:
    return LeaveGroupRequest(group_id=group, member_id=member_id,
                             members=[LeaveGroupRequest.MemberIdentity(member_id=member_id)])


def commit_codes(response: Any) -> list[int]:
    return [p.error_code for t in response.topics for p in t.partitions]


def fetch_v7(group: str, *topics: str | None) -> Any:
    """OffsetFetch v1-7 for partition 0 of each topic; no topics for all of them."""
    listed = None if not topics else [OffsetFetchRequest.OffsetFetchRequestTopic(name=t, partition_indexes=[0])
                                      for t in topics]
    return OffsetFetchRequest(group_id=group, topics=listed, require_stable=False)


def fetch_v8(*groups: tuple[str, list[str] | None], by_id: Cluster | None = None) -> Any:
    """OffsetFetch v8+ for partition 0 of each listed topic of each group (None: all of them)."""
    _Group = OffsetFetchRequest.OffsetFetchRequestGroup
    _Topics = _Group.OffsetFetchRequestTopics
    wanted = []
    for group, topics in groups:
        listed = None
        if topics is not None:
            listed = [_Topics(name=t, partition_indexes=[0]) if by_id is None else
                      _Topics(topic_id=by_id.topics[t].topic_id if t in by_id.topics else unknown_topic_id(t),
                              partition_indexes=[0]) for t in topics]
        wanted.append(_Group(group_id=group, member_id=None, member_epoch=-1, topics=listed))
    return OffsetFetchRequest(groups=wanted, require_stable=False)


def offset_delete(group: str, *topics: str) -> Any:
    _Topic = OffsetDeleteRequest.OffsetDeleteRequestTopic
    return OffsetDeleteRequest(group_id=group, topics=[_Topic(name=t, partitions=[
        _Topic.OffsetDeleteRequestPartition(partition_index=0)]) for t in topics])


def stored(c: Cluster, group: str) -> dict[tuple[str, int], int]:
    return {(topic, partition): committed.offset
            for topic, partition, committed in c.groups.fetch_offsets(group, None) if committed is not None}


def stable_member(c: Cluster, group: str) -> Any:
    """A one-member Stable group, joined and synced by the super user."""
    joined = call(c, join(group), 3, ADMIN)
    assert joined.error_code == 0
    assert call(c, sync(group, joined.generation_id, joined.member_id, b"mine"), 5, ADMIN).error_code == 0
    return joined


def with_offsets(c: Cluster, group: str, *topics: str) -> None:
    """Topics of one partition each, with offset 5 committed by the super user."""
    for topic in topics:
        c.create_topic(topic, 1, 1)
    assert commit_codes(call(c, commit(group, *[(t, 0) for t in topics]), 9, ADMIN)) == [0] * len(topics)


# -- FindCoordinator ----------------------------------------------------------------------------------------

def test_find_coordinator_batched_needs_describe_on_each_group_key() -> None:
    c = secured_cluster()
    allow(c, ALICE, Op.DESCRIBE, Type.GROUP, "mine")
    answer = call(c, FindCoordinatorRequest(key_type=0, coordinator_keys=["mine", "theirs"]), 4, ALICE)
    assert [(k.key, k.error_code, k.node_id, k.host, k.port, k.error_message) for k in answer.coordinators] == [
        ("mine", 0, 1, answer.coordinators[0].host, answer.coordinators[0].port, ""),
        ("theirs", GAF, -1, "", -1, "")]  # v4+ set no message per key: the schema's default "" (Kafka 4.3.1)
    assert answer.coordinators[0].port > 0
    assert [k.error_code for k in call(c, FindCoordinatorRequest(key_type=0, coordinator_keys=["theirs"]), 6,
                                       ADMIN).coordinators] == [0]


def test_find_coordinator_single_key_refusal_carries_kafkas_default_message() -> None:
    c = secured_cluster()
    refused = call(c, FindCoordinatorRequest(key="theirs", key_type=0), 3, ALICE)
    assert (refused.error_code, refused.error_message, refused.node_id, refused.host, refused.port) == (
        GAF, "Group authorization failed.", -1, "", -1)
    assert call(c, FindCoordinatorRequest(key="theirs"), 0, ALICE).error_code == GAF
    allow(c, ALICE, Op.READ, Type.GROUP, "theirs")  # READ implies DESCRIBE
    found = call(c, FindCoordinatorRequest(key="theirs", key_type=0), 3, ALICE)
    assert (found.error_code, found.error_message, found.node_id) == (0, "NONE", 1)


def test_find_coordinator_for_a_transaction_needs_describe_on_the_transactional_id() -> None:
    c = secured_cluster()
    allow(c, ALICE, Op.WRITE, Type.TRANSACTIONAL_ID, "tx-", Pattern.PREFIXED)  # WRITE implies DESCRIBE
    allow(c, ALICE, Op.DESCRIBE, Type.GROUP, "*")  # a group grant does not cover transactional ids
    answer = call(c, FindCoordinatorRequest(key_type=1, coordinator_keys=["tx-1", "other"]), 4, ALICE)
    assert [(k.error_code, k.node_id) for k in answer.coordinators] == [
        (0, 1), (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1)]
    single = call(c, FindCoordinatorRequest(key="other", key_type=1), 2, ALICE)
    assert (single.error_code, single.error_message) == (
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "Transactional Id authorization failed.")
    assert call(c, FindCoordinatorRequest(key="other", key_type=1), 2, ADMIN).error_code == 0


# -- JoinGroup, SyncGroup, Heartbeat, LeaveGroup ------------------------------------------------------------

def test_join_group_without_read_on_the_group_is_group_authorization_failed_and_joins_nobody() -> None:
    c = secured_cluster()
    allow(c, BOB, Op.DESCRIBE, Type.GROUP, "g")  # DESCRIBE does not imply READ
    for version, protocol_name in ((9, None), (6, "")):
        refused = call(c, join("g"), version, BOB)
        assert (refused.error_code, refused.member_id, refused.generation_id, refused.leader, refused.members,
                refused.protocol_name, refused.protocol_type) == (GAF, "", -1, "", [], protocol_name, None)
    assert "g" not in c.groups.groups
    allow(c, ALICE, Op.READ, Type.GROUP, "g")
    joined = call(c, join("g"), 3, ALICE)
    assert joined.error_code == 0 and list(c.groups.groups["g"].members) == [joined.member_id]


def test_sync_group_without_read_on_the_group_is_group_authorization_failed_and_assigns_nothing() -> None:
    c = secured_cluster()
    joined = call(c, join("g"), 3, ADMIN)
    refused = call(c, sync("g", joined.generation_id, joined.member_id, b"stolen"), 5, BOB)
    assert (refused.error_code, refused.assignment, refused.protocol_type, refused.protocol_name) == (
        GAF, b"", None, None)
    assert c.groups.groups["g"].members[joined.member_id].assignment == b""
    allow(c, ALICE, Op.READ, Type.GROUP, "g")
    synced = call(c, sync("g", joined.generation_id, joined.member_id, b"mine"), 5, ALICE)
    assert (synced.error_code, synced.assignment) == (0, b"mine")


def test_heartbeat_without_read_on_the_group_is_group_authorization_failed_and_keeps_no_session_alive() -> None:
    c = secured_cluster()
    joined = stable_member(c, "g")
    member = c.groups.groups["g"].members[joined.member_id]
    deadline = member.session_deadline_ms
    c.clock.advance(1000)  # type: ignore[attr-defined]
    assert call(c, heartbeat("g", joined.generation_id, joined.member_id), 4, BOB).error_code == GAF
    assert member.session_deadline_ms == deadline
    allow(c, ALICE, Op.READ, Type.GROUP, "g")
    assert call(c, heartbeat("g", joined.generation_id, joined.member_id), 4, ALICE).error_code == 0
    assert member.session_deadline_ms == deadline + 1000


def test_leave_group_without_read_on_the_group_is_group_authorization_failed_and_nobody_leaves() -> None:
    c = secured_cluster()
    joined = stable_member(c, "g")
    refused = call(c, leave("g", joined.member_id), 5, BOB)
    assert (refused.error_code, refused.members) == (GAF, [])
    assert call(c, leave("g", joined.member_id), 2, BOB).error_code == GAF
    assert list(c.groups.groups["g"].members) == [joined.member_id]
    allow(c, ALICE, Op.READ, Type.GROUP, "g")
    left = call(c, leave("g", joined.member_id), 5, ALICE)
    assert (left.error_code, [m.error_code for m in left.members]) == (0, [0])
    assert c.groups.groups["g"].members == {}


# -- OffsetCommit -------------------------------------------------------------------------------------------

def test_offset_commit_without_read_on_the_group_fails_every_partition_and_stores_nothing() -> None:
    c = secured_cluster()
    c.create_topic("orders", 2, 1)
    allow(c, BOB, Op.READ, Type.TOPIC, "orders")
    refused = call(c, commit("g", ("orders", 0), ("orders", 1), ("unknown", 0)), 9, BOB)
    assert commit_codes(refused) == [GAF, GAF, GAF]
    assert "g" not in c.groups.groups
    # v10 names topics by id: the group check comes before an unknown id is noticed
    assert commit_codes(call(c, commit("g", ("orders", 0), ("unknown", 0), by_id=c), 10, BOB)) == [GAF, GAF]
    allow(c, BOB, Op.READ, Type.GROUP, "g")
    assert commit_codes(call(c, commit("g", ("orders", 0)), 9, BOB)) == [0]
    assert stored(c, "g") == {("orders", 0): 5}


def test_offset_commit_checks_read_on_each_topic_before_whether_it_exists() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    c.create_topic("secret", 1, 1)
    allow(c, ALICE, Op.READ, Type.GROUP, "g")
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    allow(c, ALICE, Op.READ, Type.TOPIC, "known-", Pattern.PREFIXED)
    answer = call(c, commit("g", ("orders", 0), ("secret", 0), ("missing", 0), ("known-missing", 0)), 9, ALICE)
    assert commit_codes(answer) == [0, TAF, TAF, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    assert stored(c, "g") == {("orders", 0): 5}
    assert commit_codes(call(c, commit("g", ("secret", 0), offset=9), 9, ADMIN)) == [0]
    assert stored(c, "g") == {("orders", 0): 5, ("secret", 0): 9}


def test_offset_commit_with_every_topic_refused_does_not_reach_the_coordinator() -> None:
    c = secured_cluster()
    c.create_topic("secret", 1, 1)
    allow(c, ALICE, Op.READ, Type.GROUP, "g")
    assert commit_codes(call(c, commit("g", ("secret", 0), ("missing", 0)), 9, ALICE)) == [TAF, TAF]
    assert "g" not in c.groups.groups  # a simple commit would have created the group


def test_offset_commit_v10_answers_unknown_topic_ids_before_topic_authorization() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    c.create_topic("secret", 1, 1)
    allow(c, ALICE, Op.READ, Type.GROUP, "g")
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    request = commit("g", ("orders", 0), ("secret", 0), ("gone", 0), by_id=c)
    answer = call(c, request, 10, ALICE)
    assert commit_codes(answer) == [0, TAF, ErrorCode.UNKNOWN_TOPIC_ID]
    assert [t.topic_id for t in answer.topics] == [t.topic_id for t in request.topics]
    assert stored(c, "g") == {("orders", 0): 5}
    refused_only = call(c, commit("h", ("secret", 0), ("gone", 0), by_id=c), 10, ALICE)
    assert commit_codes(refused_only) == [GAF, GAF]  # no READ on group "h"
    allow(c, ALICE, Op.READ, Type.GROUP, "h")
    assert commit_codes(call(c, commit("h", ("secret", 0), ("gone", 0), by_id=c), 10, ALICE)) == [
        TAF, ErrorCode.UNKNOWN_TOPIC_ID]
    assert "h" not in c.groups.groups


# -- OffsetFetch --------------------------------------------------------------------------------------------

def test_offset_fetch_v8_without_describe_on_a_group_answers_that_group_only() -> None:
    c = secured_cluster()
    with_offsets(c, "g", "orders")
    with_offsets(c, "h", "events")
    allow(c, ALICE, Op.DESCRIBE, Type.GROUP, "h")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "*")
    groups = call(c, fetch_v8(("g", ["orders"]), ("h", ["events"])), 9, ALICE).groups
    assert [(g.group_id, g.error_code, g.topics) for g in groups][0] == ("g", GAF, [])
    assert (groups[1].error_code, groups[1].topics[0].partitions[0].committed_offset) == (0, 5)
    assert call(c, fetch_v8(("g", ["orders"])), 9, ADMIN).groups[0].topics[0].partitions[0].committed_offset == 5


def test_offset_fetch_before_v8_reports_the_group_refusal_at_the_top_or_on_every_partition_in_v1() -> None:
    c = secured_cluster()
    with_offsets(c, "g", "orders")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "orders")
    for version in (2, 7):
        answer = call(c, fetch_v7("g", "orders"), version, ALICE)
        assert (answer.error_code, answer.topics) == (GAF, [])
    v1 = call(c, fetch_v7("g", "orders"), 1, ALICE).topics[0].partitions[0]
    assert (v1.error_code, v1.committed_offset, v1.metadata) == (GAF, -1, "")
    allow(c, ALICE, Op.READ, Type.GROUP, "g")  # READ implies DESCRIBE
    assert call(c, fetch_v7("g", "orders"), 7, ALICE).topics[0].partitions[0].committed_offset == 5


def test_offset_fetch_of_listed_topics_without_describe_is_topic_authorization_failed_after_the_others() -> None:
    c = secured_cluster()
    with_offsets(c, "g", "orders", "secret")
    allow(c, ALICE, Op.DESCRIBE, Type.GROUP, "g")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "orders")
    for version in (1, 7):
        topics = call(c, fetch_v7("g", "secret", "orders", "missing"), version, ALICE).topics
        assert [(t.name, t.partitions[0].error_code, t.partitions[0].committed_offset) for t in topics] == [
            ("orders", 0, 5), ("secret", TAF, -1), ("missing", TAF, -1)]
    topics = call(c, fetch_v8(("g", ["secret", "orders"])), 9, ALICE).groups[0].topics
    assert [(t.name, t.partitions[0].error_code, t.partitions[0].committed_offset,
             t.partitions[0].committed_leader_epoch, t.partitions[0].metadata) for t in topics] == [
        ("orders", 0, 5, -1, "m"), ("secret", TAF, -1, -1, "")]


def test_offset_fetch_of_all_partitions_leaves_out_topics_the_caller_may_not_describe() -> None:
    c = secured_cluster()
    with_offsets(c, "g", "orders", "secret")
    allow(c, ALICE, Op.DESCRIBE, Type.GROUP, "g")
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    everything = call(c, fetch_v7("g"), 7, ALICE)
    assert (everything.error_code, [t.name for t in everything.topics]) == (0, ["orders"])
    groups = call(c, fetch_v8(("g", None)), 9, ALICE).groups
    assert [t.name for t in groups[0].topics] == ["orders"]
    assert [t.name for t in call(c, fetch_v8(("g", None)), 9, ADMIN).groups[0].topics] == ["orders", "secret"]


def test_offset_fetch_v10_by_topic_id_refuses_topics_the_caller_may_not_describe() -> None:
    c = secured_cluster()
    with_offsets(c, "g", "orders", "secret")
    allow(c, ALICE, Op.DESCRIBE, Type.GROUP, "g")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "orders")
    topics = call(c, fetch_v8(("g", ["secret", "orders"]), by_id=c), 10, ALICE).groups[0].topics
    assert [(t.topic_id, t.partitions[0].error_code, t.partitions[0].committed_offset) for t in topics] == [
        (c.topics["orders"].topic_id, 0, 5), (c.topics["secret"].topic_id, TAF, -1)]
    everything = call(c, fetch_v8(("g", None)), 10, ALICE).groups[0].topics
    assert [t.topic_id for t in everything] == [c.topics["orders"].topic_id]


# -- OffsetDelete -------------------------------------------------------------------------------------------

def test_offset_delete_without_delete_on_the_group_is_refused_at_the_top_and_keeps_the_offsets() -> None:
    c = secured_cluster()
    with_offsets(c, "g", "orders")
    allow(c, ALICE, Op.READ, Type.GROUP, "g")  # READ is not DELETE
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    refused = call(c, offset_delete("g", "orders"), 0, ALICE)
    assert (refused.error_code, refused.topics) == (GAF, [])
    assert stored(c, "g") == {("orders", 0): 5}
    allow(c, ALICE, Op.DELETE, Type.GROUP, "g")
    deleted = call(c, offset_delete("g", "orders"), 0, ALICE)
    assert (deleted.error_code, deleted.topics[0].partitions[0].error_code) == (0, 0)
    assert stored(c, "g") == {}


def test_offset_delete_needs_read_on_each_topic_and_keeps_the_refused_offsets() -> None:
    c = secured_cluster()
    with_offsets(c, "g", "orders", "secret")
    allow(c, ALICE, Op.DELETE, Type.GROUP, "g")
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    answer = call(c, offset_delete("g", "secret", "orders"), 0, ALICE)
    assert answer.error_code == 0
    assert [(t.name, t.partitions[0].error_code) for t in answer.topics] == [("secret", TAF), ("orders", 0)]
    assert stored(c, "g") == {("secret", 0): 5}
    # a group-level error from the coordinator replaces the partition results
    gone = call(c, offset_delete("nobody", "secret"), 0, ADMIN)
    assert (gone.error_code, gone.topics) == (ErrorCode.GROUP_ID_NOT_FOUND, [])


# -- DescribeGroups, ListGroups, DeleteGroups ---------------------------------------------------------------

def test_describe_groups_without_describe_is_group_authorization_failed_first_and_reveals_nothing() -> None:
    c = secured_cluster()
    stable_member(c, "open")
    stable_member(c, "closed")
    allow(c, ALICE, Op.DESCRIBE, Type.GROUP, "open")
    groups = call(c, DescribeGroupsRequest(groups=["open", "closed"], include_authorized_operations=True),
                  5, ALICE).groups
    refused, described = groups
    assert (refused.group_id, refused.error_code, refused.error_message, refused.group_state, refused.protocol_type,
            refused.protocol_data, refused.members, refused.authorized_operations) == (
        "closed", GAF, None, "", "", "", [], None)
    assert (described.group_id, described.error_code, described.group_state) == ("open", 0, "Stable")
    assert described.authorized_operations == {AclOperation.DESCRIBE}
    admin = call(c, DescribeGroupsRequest(groups=["closed"], include_authorized_operations=True), 5, ADMIN).groups
    assert (admin[0].error_code, admin[0].group_state, len(admin[0].members)) == (0, "Stable", 1)
    assert admin[0].authorized_operations == {AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE,
                                              AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS}


def test_list_groups_shows_every_group_with_cluster_describe_else_only_the_describable_ones() -> None:
    c = secured_cluster()
    for group in ("app-1", "app-2", "other"):
        stable_member(c, group)
    allow(c, ALICE, Op.DESCRIBE, Type.GROUP, "app-", Pattern.PREFIXED)
    request = ListGroupsRequest(states_filter=[], types_filter=[])
    listed = call(c, request, 5, ALICE)
    assert (listed.error_code, sorted(g.group_id for g in listed.groups)) == (0, ["app-1", "app-2"])
    assert call(c, request, 5, BOB).groups == []
    allow(c, BOB, Op.DESCRIBE, Type.CLUSTER)
    assert sorted(g.group_id for g in call(c, request, 0, BOB).groups) == ["app-1", "app-2", "other"]
    assert len(call(c, request, 5, ADMIN).groups) == 3


def test_delete_groups_without_delete_is_group_authorization_failed_after_the_others_and_deletes_nothing() -> None:
    c = secured_cluster()
    with_offsets(c, "mine", "orders")
    with_offsets(c, "theirs", "events")
    allow(c, ALICE, Op.DELETE, Type.GROUP, "mine")
    deny(c, ALICE, Op.DELETE, Type.GROUP, "theirs")
    results = call(c, DeleteGroupsRequest(groups_names=["theirs", "mine", "theirs"]), 2, ALICE).results
    assert [(r.group_id, r.error_code, r.error_message) for r in results] == [
        ("mine", 0, None), ("theirs", GAF, None)]
    assert "mine" not in c.groups.groups and stored(c, "theirs") == {("events", 0): 5}
    assert [r.error_code for r in call(c, DeleteGroupsRequest(groups_names=["theirs"]), 2, ADMIN).results] == [0]
    assert "theirs" not in c.groups.groups
