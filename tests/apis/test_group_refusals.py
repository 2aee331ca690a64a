"""What the consumer-group APIs refuse and in which order, as Apache Kafka 4.x does (without ACLs unless named).

Each case follows KafkaApis (handleSyncGroupRequest, handleFindCoordinatorRequestLessThanV4,
handleDeleteGroupsRequest, handleOffsetDeleteRequest, handleOffsetCommitRequest) and the answers the group
coordinator gives for what reaches it (GroupCoordinatorService, OffsetMetadataManager).
"""

from __future__ import annotations

from typing import Any

from minibroker.core.acls import STANDARD_AUTHORIZER
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import Node
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    DeleteGroupsRequest,
    FindCoordinatorRequest,
    JoinGroupRequest,
    OffsetDeleteRequest,
    SyncGroupRequest,
)
from minibroker.testing import TEST_BROKER_CONFIG

from .authz import ADMIN, Op, Type, allow, coordinator, other_node, secured_cluster
from .authz import call_node as call
from .authz import offset_commit as commit

NOW = 1_700_000_000_000
ALICE = "User:alice"
UTOP = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
TAF = ErrorCode.TOPIC_AUTHORIZATION_FAILED


# -- a cluster and a way to talk to one of its nodes ----------------------------------------------------------

def two_nodes(**configs: Any) -> Cluster:
    """Two nodes, so that every group has a node that does not coordinate it."""
    settings = {**TEST_BROKER_CONFIG, "node.id": 1, **configs}
    return Cluster(BrokerConfig(settings), clock=ManualClock(NOW),
                   nodes=[Node(1, "127.0.0.1", 9092), Node(2, "127.0.0.1", 9093)])


# -- request builders -----------------------------------------------------------------------------------------

def join(group: str, member_id: str = "") -> Any:
    return JoinGroupRequest(group_id=group, session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
                            member_id=member_id, group_instance_id=None, protocol_type="consumer",
                            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")])


def sync(group: str, generation: int, member_id: str, protocol_type: str | None = "consumer",
         protocol_name: str | None = "range", assignment: bytes | None = None) -> Any:
    assignments = [] if assignment is None else [
        SyncGroupRequest.SyncGroupRequestAssignment(member_id=member_id, assignment=assignment)]
    return SyncGroupRequest(group_id=group, generation_id=generation, member_id=member_id, group_instance_id=None,
                            protocol_type=protocol_type, protocol_name=protocol_name, assignments=assignments)


def codes(response: Any) -> list[int]:
    return [p.error_code for t in response.topics for p in t.partitions]


def offset_delete(group: str, *partitions: tuple[str, int]) -> Any:
    _Topic = OffsetDeleteRequest.OffsetDeleteRequestTopic
    return OffsetDeleteRequest(group_id=group, topics=[
        _Topic(name=name, partitions=[_Topic.OffsetDeleteRequestPartition(partition_index=index)])
        for name, index in partitions])


def stored(c: Cluster, group: str) -> dict[tuple[str, int], int]:
    return {(topic, partition): committed.offset
            for topic, partition, committed in c.groups.fetch_offsets(group, None) if committed is not None}


def stable_member(c: Cluster, group: str, principal: str = "User:ANONYMOUS") -> Any:
    """A one-member Stable group (generation 1) on its coordinator."""
    node = coordinator(c, group)
    joined = call(c, join(group), 3, node, principal)
    assert joined.error_code == 0
    synced = call(c, sync(group, joined.generation_id, joined.member_id, assignment=b"mine"), 5, node, principal)
    assert synced.error_code == 0
    return joined


# -- SyncGroup ------------------------------------------------------------------------------------------------

def test_sync_group_v5_without_protocol_type_or_name_is_inconsistent_group_protocol_before_anything_else() -> None:
    c = two_nodes()
    member = stable_member(c, "g")
    here = coordinator(c, "g")
    for protocol_type, protocol_name in ((None, "range"), ("consumer", None), (None, None)):
        answer = call(c, sync("g", member.generation_id, member.member_id, protocol_type, protocol_name), 5, here)
        assert (answer.error_code, answer.protocol_type, answer.protocol_name, answer.assignment) == (
            ErrorCode.INCONSISTENT_GROUP_PROTOCOL, None, None, b"")
        # before the coordinator check, and before the group's own checks (a made-up generation)
        elsewhere = call(c, sync("g", 99, "nobody", protocol_type, protocol_name), 5, other_node(c, "g"))
        assert elsewhere.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    # an empty string is present: only null is refused up front
    assert call(c, sync("g", member.generation_id, member.member_id, "", "range"), 5, here).error_code == \
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL  # and then differs from the group's "consumer"
    assert call(c, sync("g", member.generation_id, member.member_id), 5, here).assignment == b"mine"


def test_sync_group_v5_without_protocol_name_is_refused_before_the_group_acl() -> None:
    c = secured_cluster()
    stable_member(c, "g", ADMIN)
    answer = call(c, sync("g", 1, "nobody", "consumer", None), 5, principal=ALICE)  # no READ on "g"
    assert answer.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert call(c, sync("g", 1, "nobody"), 5, principal=ALICE).error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED


def test_sync_group_before_v5_carries_no_protocol_and_is_not_refused_for_it() -> None:
    c = two_nodes()
    member = stable_member(c, "g")
    answer = call(c, sync("g", member.generation_id, member.member_id, None, None), 4, coordinator(c, "g"))
    assert (answer.error_code, answer.assignment) == (0, b"mine")


def test_sync_group_v5_refused_leader_hands_out_nothing() -> None:
    c = two_nodes()
    here = coordinator(c, "g")
    joined = call(c, join("g"), 3, here)
    refused = call(c, sync("g", joined.generation_id, joined.member_id, None, "range", b"mine"), 5, here)
    assert refused.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert c.groups.groups["g"].state.value == "CompletingRebalance"


# -- FindCoordinator ------------------------------------------------------------------------------------------

def test_find_coordinator_v1_to_v3_success_carries_the_message_none() -> None:
    c = two_nodes()
    for version in (1, 2, 3):
        found = call(c, FindCoordinatorRequest(key="g", key_type=0), version)
        assert (found.error_code, found.error_message, found.node_id) == (0, "NONE", coordinator(c, "g").node_id)
        txn = call(c, FindCoordinatorRequest(key="t", key_type=1), version)
        assert (txn.error_code, txn.error_message) == (0, "NONE")
    batched = call(c, FindCoordinatorRequest(key_type=0, coordinator_keys=["g"]), 4).coordinators[0]
    assert (batched.error_code, batched.error_message) == (0, "")  # v4+ leaves each key's message at ""
    assert call(c, FindCoordinatorRequest(key="g"), 0).error_code == 0  # v0 has no message
    # an unknown key type is FindCoordinatorRequest.getErrorResponse: prepareOldResponse with Errors.message()
    unknown = call(c, FindCoordinatorRequest(key="g", key_type=7), 3)
    assert (unknown.error_code, unknown.error_message, unknown.node_id) == (
        ErrorCode.INVALID_REQUEST, "This most likely occurs because of a request being malformed by the client "
        "library or the message was sent to an incompatible broker. See the broker logs for more details.", -1)


# -- DeleteGroups ---------------------------------------------------------------------------------------------

def test_delete_groups_answers_a_group_named_twice_once() -> None:
    c = two_nodes()
    c.create_topic("orders", 1, 1)
    here = coordinator(c, "g")
    assert codes(call(c, commit("g", ("orders", 0)), 9, here)) == [0]
    results = call(c, DeleteGroupsRequest(groups_names=["g", "g"]), 2, here).results
    assert [(r.group_id, r.error_code) for r in results] == [("g", 0)]
    assert "g" not in c.groups.groups
    gone = call(c, DeleteGroupsRequest(groups_names=["g", "g"]), 2, here).results
    assert [(r.group_id, r.error_code) for r in gone] == [("g", ErrorCode.GROUP_ID_NOT_FOUND)]
    elsewhere = call(c, DeleteGroupsRequest(groups_names=["g", "g"]), 2, other_node(c, "g")).results
    assert [(r.group_id, r.error_code) for r in elsewhere] == [("g", ErrorCode.NOT_COORDINATOR)]


# -- OffsetDelete ---------------------------------------------------------------------------------------------

def test_offset_delete_answers_unknown_topics_and_partitions_itself() -> None:
    c = two_nodes()
    c.create_topic("orders", 1, 1)
    here = coordinator(c, "g")
    assert codes(call(c, commit("g", ("orders", 0)), 9, here)) == [0]
    answer = call(c, offset_delete("g", ("missing", 0), ("orders", 7), ("orders", 0)), 0, here)
    assert answer.error_code == 0
    assert [(t.name, p.partition_index, p.error_code) for t in answer.topics for p in t.partitions] == [
        ("missing", 0, UTOP), ("orders", 7, UTOP), ("orders", 0, 0)]
    assert stored(c, "g") == {}


def test_offset_delete_group_error_still_replaces_every_partition_result() -> None:
    c = two_nodes()
    answer = call(c, offset_delete("nobody", ("missing", 0)), 0, coordinator(c, "nobody"))
    assert (answer.error_code, answer.topics) == (ErrorCode.GROUP_ID_NOT_FOUND, [])
    elsewhere = call(c, offset_delete("nobody", ("missing", 0)), 0, other_node(c, "nobody"))
    assert (elsewhere.error_code, elsewhere.topics) == (ErrorCode.NOT_COORDINATOR, [])


# -- OffsetCommit ---------------------------------------------------------------------------------------------

def test_offset_commit_answers_unknown_topics_and_partitions_before_the_generation_check() -> None:
    c = two_nodes()
    c.create_topic("orders", 1, 1)
    member = stable_member(c, "g")
    here = coordinator(c, "g")
    stale = dict(generation=7, member_id=member.member_id)
    assert codes(call(c, commit("g", ("missing", 0), ("orders", 3), **stale), 9, here)) == [UTOP, UTOP]
    mixed = call(c, commit("g", ("orders", 0), ("missing", 0), **stale), 9, here)
    assert codes(mixed) == [ErrorCode.ILLEGAL_GENERATION, UTOP]
    assert stored(c, "g") == {}


def test_offset_commit_of_only_unknown_partitions_does_not_reach_the_coordinator() -> None:
    c = two_nodes()
    c.create_topic("orders", 1, 1)
    assert codes(call(c, commit("simple", ("missing", 0), ("orders", 3)), 9, coordinator(c, "simple"))) == \
        [UTOP, UTOP]
    assert "simple" not in c.groups.groups  # a commit that reaches the coordinator creates the group
    elsewhere = call(c, commit("simple", ("missing", 0), ("orders", 0)), 9, other_node(c, "simple"))
    assert codes(elsewhere) == [UTOP, ErrorCode.NOT_COORDINATOR]


def test_offset_commit_coordinator_errors_leave_refused_topics_as_they_were() -> None:
    settings = {**TEST_BROKER_CONFIG, "node.id": 1, "authorizer.class.name": STANDARD_AUTHORIZER, "super.users": ADMIN}
    c = Cluster(BrokerConfig(settings), clock=ManualClock(NOW),
                nodes=[Node(1, "127.0.0.1", 9092), Node(2, "127.0.0.1", 9093)])
    c.create_topic("orders", 1, 1)
    c.create_topic("secret", 1, 1)
    allow(c, ALICE, Op.READ, Type.GROUP, "g")
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    elsewhere = other_node(c, "g")
    answer = call(c, commit("g", ("orders", 0), ("secret", 0)), 9, elsewhere, ALICE)
    assert codes(answer) == [ErrorCode.NOT_COORDINATOR, TAF]
    by_id = call(c, commit("g", ("orders", 0), ("secret", 0), ("gone", 0), by_id=c), 10, elsewhere, ALICE)
    assert codes(by_id) == [ErrorCode.NOT_COORDINATOR, TAF, ErrorCode.UNKNOWN_TOPIC_ID]


def test_offset_commit_v10_off_the_coordinator_answers_unknown_topic_ids_unknown_topic_id() -> None:
    c = two_nodes()
    c.create_topic("orders", 1, 1)
    elsewhere = other_node(c, "g")
    request = commit("g", ("gone", 0), ("orders", 4), ("orders", 0), by_id=c)
    answer = call(c, request, 10, elsewhere)
    assert codes(answer) == [ErrorCode.UNKNOWN_TOPIC_ID, UTOP, ErrorCode.NOT_COORDINATOR]
    assert [t.topic_id for t in answer.topics] == [t.topic_id for t in request.topics]
    only_unknown = call(c, commit("g", ("gone", 0), by_id=c), 10, elsewhere)
    assert codes(only_unknown) == [ErrorCode.UNKNOWN_TOPIC_ID]
    on_coordinator = call(c, request, 10, coordinator(c, "g"))
    assert codes(on_coordinator) == [ErrorCode.UNKNOWN_TOPIC_ID, UTOP, 0]
    assert stored(c, "g") == {("orders", 0): 5}
