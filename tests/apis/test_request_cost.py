"""A request's cost is linear in its size (issue 23): requests with tens of thousands of list entries are answered
within a generous bound, where work that grew with the square of the count took minutes.

Each big request is written as bytes (tests/wire_bytes.py), its layout checked against the protocol engine at a
small size, and handed to `handle_frame` as the server would; only the broker's side is timed.
"""

from __future__ import annotations

import struct
import time
from typing import Any

from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

from minibroker.apis.context import Session
from minibroker.apis.dispatch import Deferred, Reply, handle_frame
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    ConsumerGroupHeartbeatRequest,
    DeleteAclsRequest,
    IncrementalAlterConfigsRequest,
    JoinGroupRequest,
)
from minibroker.testing import TEST_BROKER_CONFIG
from minibroker.testing.wire import WireClient
from tests.wire_bytes import compact_array, compact_bytes, compact_string, request_frame

from .authz import ADMIN, NOW, Op, Type, acl, call, secured_cluster

# generous: the linear work takes a second or two on this 2-core machine with other work running, the quadratic
# work it replaced took minutes
BOUND_S = 20.0


def answered(cluster: Cluster, api_key: int, version: int, body: bytes, principal: str = "User:alice") -> Any:
    """The decoded answer to a request body, asserting the broker's side took less than BOUND_S."""
    frame = memoryview(bytearray(request_frame(api_key, version, body)))
    start = time.monotonic()
    outcome = handle_frame(frame, cluster, cluster.nodes[0], Session(client_host="/127.0.0.1", principal=principal))
    if isinstance(outcome, Deferred):  # a JoinGroup that completed its rebalance at once
        assert outcome.pending.done
        outcome = Reply(outcome.encode(outcome.pending.result()))
    elapsed = time.monotonic() - start
    assert elapsed < BOUND_S, f"answered in {elapsed:.1f} s"
    assert isinstance(outcome, Reply) and isinstance(outcome.data, bytes)
    return WireClient.decode_response(outcome.data[4:], api_key, version)[1]


def plain_cluster() -> Cluster:
    return Cluster(BrokerConfig({**TEST_BROKER_CONFIG, "node.id": 1}), clock=ManualClock(NOW))


# -- JoinGroup: the protocol chosen among the members' --------------------------------------------------------

JOIN_GROUP, JOIN_VERSION = 11, 9


def join_group_body(group_id: str, instance_id: str, protocols: list[tuple[str, bytes]]) -> bytes:
    """JoinGroupRequest v9 for a static member joining without a member id."""
    return (compact_string(group_id) + struct.pack(">ii", 30_000, 30_000) + compact_string("")
            + compact_string(instance_id) + compact_string("consumer")
            + compact_array([compact_string(name) + compact_bytes(metadata) + b"\x00" for name, metadata in protocols])
            + compact_string(None) + b"\x00")


def test_join_group_layout_is_the_engines() -> None:
    protocols = [("range", b"\x00\x01"), ("p2", b"")]
    request = JoinGroupRequest(group_id="g", session_timeout_ms=30_000, rebalance_timeout_ms=30_000, member_id="",
                               group_instance_id="i", protocol_type="consumer", reason=None,
                               protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name=n, metadata=m)
                                          for n, m in protocols])
    assert bytes(request.encode(version=JOIN_VERSION)) == join_group_body("g", "i", protocols)


def test_join_group_naming_50000_protocols_is_answered_in_bounded_time() -> None:
    cluster = plain_cluster()
    protocols = [(f"p{i:05d}", b"") for i in range(50_000)]
    joined = answered(cluster, JOIN_GROUP, JOIN_VERSION, join_group_body("g", "i", protocols))
    # the only member leads, with its first protocol: every one is shared, each has no other vote
    assert (joined.error_code, joined.protocol_name, joined.leader) == (0, "p00000", joined.member_id)
    assert [(m.member_id, m.group_instance_id) for m in joined.members] == [(joined.member_id, "i")]


def test_classic_member_with_30000_protocols_none_shared_is_refused_by_a_consumer_group_in_bounded_time() -> None:
    cluster = plain_cluster()
    cluster.create_topic("t", 1)
    # a consumer-protocol member makes "g" a consumer group; a classic member with 30,001 protocols joins it
    assert call(cluster, ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="m", member_epoch=0, instance_id=None, rack_id=None, rebalance_timeout_ms=30_000,
        subscribed_topic_names=["t"], subscribed_topic_regex=None, server_assignor=None, topic_partitions=[]),
        1).error_code == 0
    subscription = bytes(ConsumerProtocolSubscription(version=0, topics=["t"], user_data=None).encode(version=0))
    protocols = [("range", subscription)] + [(f"a{i:05d}", b"") for i in range(30_000)]
    joined = answered(cluster, JOIN_GROUP, JOIN_VERSION, join_group_body("g", "a", protocols))
    assert (joined.error_code, joined.protocol_type, joined.protocol_name) == (0, "consumer", "range")
    # another whose 30,001 protocols are none of the first member's: every name is looked for in vain
    protocols = [("roundrobin", subscription)] + [(f"b{i:05d}", b"") for i in range(30_000)]
    refused = answered(cluster, JOIN_GROUP, JOIN_VERSION, join_group_body("g", "b", protocols))
    assert refused.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert len(cluster.groups.consumer.groups["g"].members) == 2


# -- DeleteAcls: each filter matched against the ACLs -----------------------------------------------------------

DELETE_ACLS, DELETE_ACLS_VERSION = 31, 3
ANY, LITERAL, ALLOW, READ, TOPIC = 1, 3, 3, 3, 2


def delete_acls_body(filters: list[tuple[int, str | None, int, str | None, str | None, int, int]]) -> bytes:
    """DeleteAclsRequest v3: (resource type, name, pattern type, principal, host, operation, permission)."""
    return compact_array([
        struct.pack(">b", resource_type) + compact_string(name) + struct.pack(">b", pattern_type)
        + compact_string(principal) + compact_string(host) + struct.pack(">bb", operation, permission) + b"\x00"
        for resource_type, name, pattern_type, principal, host, operation, permission in filters]) + b"\x00"


def test_delete_acls_layout_is_the_engines() -> None:
    filters = [(TOPIC, "t", LITERAL, "User:u1", "*", READ, ALLOW), (1, None, 1, None, None, 1, 1)]
    request = DeleteAclsRequest(filters=[DeleteAclsRequest.DeleteAclsFilter(
        resource_type_filter=t, resource_name_filter=n, pattern_type_filter=p, principal_filter=u, host_filter=h,
        operation=o, permission_type=a) for t, n, p, u, h, o, a in filters])
    assert bytes(request.encode(version=DELETE_ACLS_VERSION)) == delete_acls_body(filters)


def test_delete_acls_with_10000_filters_over_10000_acls_is_answered_in_bounded_time() -> None:
    cluster = secured_cluster()
    assert cluster.authorizer is not None
    principals = [f"User:u{i:05d}" for i in range(10_000)]
    for principal in principals:  # one topic, many principals: the ACLs share one resource pattern
        cluster.authorizer.add(acl(principal, Op.READ, Type.TOPIC, "t"))
    cluster.authorizer.add(acl("User:kept", Op.READ, Type.TOPIC, "t"))
    filters = [(TOPIC, "t", LITERAL, principal, "*", READ, ALLOW) for principal in principals]
    results = answered(cluster, DELETE_ACLS, DELETE_ACLS_VERSION, delete_acls_body(filters), ADMIN).filter_results
    # each filter answers with the one ACL it names, in the order of the filters
    assert [(r.error_code, [(m.principal, m.resource_name, m.operation) for m in r.matching_acls])
            for r in results] == [(0, [(principal, "t", READ)]) for principal in principals]
    assert [a.principal for a in cluster.authorizer] == ["User:kept"]
    assert not cluster.authorizer.authorize("User:u00000", "127.0.0.1", Op.READ, Type.TOPIC, "t")
    assert cluster.authorizer.authorize("User:kept", "127.0.0.1", Op.READ, Type.TOPIC, "t")


def test_delete_acls_with_10000_resource_filters_over_10000_acls_is_answered_in_bounded_time() -> None:
    cluster = secured_cluster()
    assert cluster.authorizer is not None
    topics = [f"t{i:05d}" for i in range(10_000)]
    for topic in topics:
        cluster.authorizer.add(acl("User:alice", Op.READ, Type.TOPIC, topic))
    # each filter names a topic's LITERAL pattern and leaves the rest ANY
    filters = [(TOPIC, topic, LITERAL, None, None, ANY, ANY) for topic in topics[1:]]
    results = answered(cluster, DELETE_ACLS, DELETE_ACLS_VERSION, delete_acls_body(filters), ADMIN).filter_results
    assert [[m.resource_name for m in r.matching_acls] for r in results] == [[topic] for topic in topics[1:]]
    assert [a.resource_name for a in cluster.authorizer] == [topics[0]]


# -- IncrementalAlterConfigs: APPEND and SUBTRACT on list configs ------------------------------------------------

INCREMENTAL_ALTER_CONFIGS, INCREMENTAL_VERSION = 44, 1
APPEND, SUBTRACT = 2, 3
THROTTLED = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def incremental_alter_configs_body(resources: list[tuple[str, list[tuple[str, int, str]]]],
                                   validate_only: bool) -> bytes:
    """IncrementalAlterConfigsRequest v1 on TOPIC resources: (topic, [(config, operation, value)])."""
    return compact_array([
        struct.pack(">b", 2) + compact_string(topic) + compact_array([
            compact_string(name) + struct.pack(">b", op) + compact_string(value) + b"\x00" for name, op, value in ops])
        + b"\x00" for topic, ops in resources]) + struct.pack(">?", validate_only) + b"\x00"


def test_incremental_alter_configs_layout_is_the_engines() -> None:
    resources = [("t0", [(THROTTLED[0], APPEND, "0:1,1:1")]), ("t1", [])]
    resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    request = IncrementalAlterConfigsRequest(validate_only=True, resources=[resource(
        resource_type=2, resource_name=topic, configs=[resource.AlterableConfig(
            name=n, config_operation=o, value=v) for n, o, v in ops]) for topic, ops in resources])
    assert bytes(request.encode(version=INCREMENTAL_VERSION)) == incremental_alter_configs_body(resources, True)


def test_incremental_alter_configs_appending_and_subtracting_long_lists_is_answered_in_bounded_time() -> None:
    cluster = plain_cluster()
    topics = [f"t{i}" for i in range(50)]
    for topic in topics:
        cluster.create_topic(topic, 1)
    # a value is a string of at most 32,767 bytes: about 4,000 distinct replicas, on two list configs per topic
    replicas = [f"{i}:{i % 7}" for i in range(4_000)]
    value = ",".join(replicas)
    assert len(value) < 32_767
    for op, expected in ((APPEND, replicas), (SUBTRACT, [])):
        resources = [(topic, [(name, op, value) for name in THROTTLED]) for topic in topics]
        body = incremental_alter_configs_body(resources, validate_only=False)
        responses = answered(cluster, INCREMENTAL_ALTER_CONFIGS, INCREMENTAL_VERSION, body).responses
        assert [(r.resource_name, r.error_code) for r in responses] == [(topic, 0) for topic in topics]
        # read back: the list in the order appended, then emptied
        assert all(cluster.topics[topic].configs[name] == expected for topic in topics for name in THROTTLED)
