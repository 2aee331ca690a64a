"""What Produce, Fetch, Metadata, InitProducerId, DescribeCluster and the ACL APIs authorize, as KafkaApis does."""

from __future__ import annotations

from typing import Any

from minibroker.core.acls import AclPermissionType
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    CreateAclsRequest,
    DeleteAclsRequest,
    DescribeAclsRequest,
    DescribeClusterRequest,
    FetchRequest,
    InitProducerIdRequest,
    MetadataRequest,
    ProduceRequest,
)

from .authz import ADMIN, NOW, Op, Pattern, Type, allow, call, deny, secured_cluster

ALICE, BOB = "User:alice", "User:bob"


def produce(topic: str, transactional_id: str | None = None, transactional: bool = False,
            acks: int = -1) -> Any:
    batch = records.build_batch([(b"k", b"v")], timestamp=NOW, producer_id=7 if transactional else -1,
                                producer_epoch=0 if transactional else -1, base_sequence=0 if transactional else -1,
                                transactional=transactional)
    return ProduceRequest(transactional_id=transactional_id, acks=acks, timeout_ms=1000, topic_data=[
        ProduceRequest.TopicProduceData(name=topic, partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=batch)])])


def produce_code(response: Any) -> int:
    return response.responses[0].partition_responses[0].error_code


def test_produce_needs_write_on_the_topic_and_a_refused_batch_is_not_stored() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    allow(c, ALICE, Op.WRITE, Type.TOPIC, "orders")
    assert produce_code(call(c, produce("orders"), 9, BOB)) == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert c.topics["orders"].partitions[0].log.log_end_offset == 0
    assert produce_code(call(c, produce("orders"), 9, ALICE)) == 0
    assert produce_code(call(c, produce("orders"), 9, ADMIN)) == 0
    assert c.topics["orders"].partitions[0].log.log_end_offset == 2


def test_produce_to_an_unknown_topic_without_write_does_not_reveal_that_it_is_unknown() -> None:
    c = secured_cluster()
    allow(c, ALICE, Op.WRITE, Type.TOPIC, "known-", Pattern.PREFIXED)
    assert produce_code(call(c, produce("secret"), 9, ALICE)) == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert produce_code(call(c, produce("known-missing"), 9, ALICE)) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_a_denied_write_wins_over_a_wildcard_allow() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    allow(c, "User:*", Op.WRITE, Type.TOPIC, "*")
    deny(c, BOB, Op.WRITE, Type.TOPIC, "orders")
    assert produce_code(call(c, produce("orders"), 9, ALICE)) == 0
    assert produce_code(call(c, produce("orders"), 9, BOB)) == ErrorCode.TOPIC_AUTHORIZATION_FAILED


def test_transactional_produce_needs_write_on_the_transactional_id_for_the_whole_request() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    allow(c, ALICE, Op.WRITE, Type.TOPIC, "orders")
    answer = call(c, produce("orders", "tx-1", transactional=True), 9, ALICE)
    partition = answer.responses[0].partition_responses[0]
    assert (partition.error_code, partition.base_offset) == (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1)
    assert c.topics["orders"].partitions[0].log.log_end_offset == 0


def test_transactional_batches_without_a_transactional_id_fail_the_whole_request_even_without_acls() -> None:
    from minibroker.core.clock import ManualClock
    from minibroker.core.cluster import Cluster
    from minibroker.core.config import BrokerConfig

    c = Cluster(BrokerConfig({"node.id": 1}), clock=ManualClock(NOW))
    c.create_topic("orders", 1, 1)
    assert produce_code(call(c, produce("orders", None, transactional=True), 9)) == \
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def fetch(topic: str, replica_id: int = -1) -> Any:
    return FetchRequest(replica_id=replica_id, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                        topics=[FetchRequest.FetchTopic(topic=topic, partitions=[FetchRequest.FetchTopic.FetchPartition(
                            partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])


def fetch_partition(response: Any) -> Any:
    return response.responses[0].partitions[0]


def test_fetch_needs_read_on_the_topic_and_unknown_topics_stay_secret() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    assert produce_code(call(c, produce("orders"), 9, ADMIN)) == 0
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    assert fetch_partition(call(c, fetch("orders"), 12, BOB)).error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert fetch_partition(call(c, fetch("orders"), 12, BOB)).records in (None, b"")
    assert fetch_partition(call(c, fetch("nothing"), 12, BOB)).error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    read = fetch_partition(call(c, fetch("orders"), 12, ALICE))
    assert read.error_code == 0 and read.records


def test_a_follower_fetch_needs_cluster_action() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    assert fetch_partition(call(c, fetch("orders", replica_id=2), 12, ALICE)).error_code == \
        ErrorCode.TOPIC_AUTHORIZATION_FAILED
    allow(c, ALICE, Op.CLUSTER_ACTION, Type.CLUSTER)
    assert fetch_partition(call(c, fetch("orders", replica_id=2), 12, ALICE)).error_code == 0


def metadata(*names: str, auto_create: bool = False, operations: bool = False) -> Any:
    return MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=n) for n in names] if names else None,
                           allow_auto_topic_creation=auto_create, include_topic_authorized_operations=operations)


def test_metadata_for_all_topics_lists_only_what_the_caller_may_describe() -> None:
    c = secured_cluster()
    for name in ("orders", "payments"):
        c.create_topic(name, 1, 1)
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    assert [t.name for t in call(c, metadata(), 12, ALICE).topics] == ["orders"]
    assert sorted(t.name for t in call(c, metadata(), 12, ADMIN).topics) == ["orders", "payments"]


def test_metadata_for_named_topics_answers_authorization_failed_whether_they_exist_or_not() -> None:
    c = secured_cluster()
    c.create_topic("payments", 1, 1)
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "orders")
    topics = {t.name: t for t in call(c, metadata("orders", "payments", "ghost"), 12, ALICE).topics}
    assert topics["orders"].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    for name in ("payments", "ghost"):
        assert (topics[name].error_code, topics[name].partitions) == (ErrorCode.TOPIC_AUTHORIZATION_FAILED, [])


def test_metadata_auto_creation_needs_create_on_the_cluster_or_the_topic() -> None:
    c = secured_cluster()
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "new-", Pattern.PREFIXED)
    answer = call(c, metadata("new-a", auto_create=True), 12, ALICE)
    assert answer.topics[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED and "new-a" not in c.topics
    allow(c, ALICE, Op.CREATE, Type.TOPIC, "new-a")
    assert call(c, metadata("new-a", auto_create=True), 12, ALICE).topics[0].error_code == 0
    assert "new-a" in c.topics


def test_metadata_topic_authorized_operations_are_the_callers() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    allow(c, ALICE, Op.WRITE, Type.TOPIC, "orders")
    (topic,) = call(c, metadata("orders", operations=True), 12, ALICE).topics
    assert topic.authorized_operations == {Op.WRITE, Op.DESCRIBE}


def init_producer_id(transactional_id: str | None) -> Any:
    return InitProducerIdRequest(transactional_id=transactional_id, transaction_timeout_ms=60000, producer_id=-1,
                                 producer_epoch=-1)


def test_an_idempotent_producer_needs_idempotent_write_or_write_on_some_topic() -> None:
    c = secured_cluster()
    refused = call(c, init_producer_id(None), 4, ALICE)
    assert (refused.error_code, refused.producer_id) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, -1)
    allow(c, ALICE, Op.WRITE, Type.TOPIC, "orders")
    assert call(c, init_producer_id(None), 4, ALICE).error_code == 0
    allow(c, BOB, Op.IDEMPOTENT_WRITE, Type.CLUSTER)
    assert call(c, init_producer_id(None), 4, BOB).error_code == 0


def test_a_transactional_producer_needs_write_on_its_transactional_id() -> None:
    c = secured_cluster()
    assert call(c, init_producer_id("tx"), 4, ALICE).error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert "tx" not in c.transactions.transactions
    allow(c, ALICE, Op.WRITE, Type.TRANSACTIONAL_ID, "tx")
    assert call(c, init_producer_id("tx"), 4, ALICE).error_code == 0


def creation(principal: str, operation: int, name: str = "orders", resource_type: int = Type.TOPIC,
             pattern: int = Pattern.LITERAL, permission: int = AclPermissionType.ALLOW) -> Any:
    return CreateAclsRequest.AclCreation(resource_type=resource_type, resource_name=name,
                                         resource_pattern_type=pattern, principal=principal, host="*",
                                         operation=operation, permission_type=permission)


def describe_acls(name: str | None = None, pattern: int = Pattern.ANY, principal: str | None = None) -> Any:
    return DescribeAclsRequest(resource_type_filter=Type.ANY, resource_name_filter=name, pattern_type_filter=pattern,
                               principal_filter=principal, host_filter=None, operation=Op.ANY,
                               permission_type=AclPermissionType.ANY)


def test_create_describe_and_delete_acls_round_trip() -> None:
    c = secured_cluster()
    created = call(c, CreateAclsRequest(creations=[
        creation(ALICE, Op.WRITE), creation(BOB, Op.WRITE, permission=AclPermissionType.DENY),
        creation(ALICE, Op.READ, "ord", pattern=Pattern.PREFIXED),
        creation(ALICE, Op.ALTER, "not-the-cluster", resource_type=Type.CLUSTER)]), 3, ADMIN)
    assert [(r.error_code, r.error_message) for r in created.results] == [
        (0, ""), (0, ""), (0, ""),
        (ErrorCode.INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster")]
    described = call(c, describe_acls("orders", Pattern.MATCH), 3, ADMIN)
    assert described.error_code == 0
    seen = {(r.resource_name, r.pattern_type, a.principal, a.operation, a.permission_type)
            for r in described.resources for a in r.acls}
    assert seen == {("orders", Pattern.LITERAL, ALICE, Op.WRITE, AclPermissionType.ALLOW),
                    ("orders", Pattern.LITERAL, BOB, Op.WRITE, AclPermissionType.DENY),
                    ("ord", Pattern.PREFIXED, ALICE, Op.READ, AclPermissionType.ALLOW)}
    assert produce_code(call(c, produce("orders"), 9, BOB)) == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    deleted = call(c, DeleteAclsRequest(filters=[DeleteAclsRequest.DeleteAclsFilter(
        resource_type_filter=Type.TOPIC, resource_name_filter=None, pattern_type_filter=Pattern.ANY,
        principal_filter=BOB, host_filter=None, operation=Op.ANY, permission_type=AclPermissionType.ANY)]), 3, ADMIN)
    assert [(m.principal, m.operation) for m in deleted.filter_results[0].matching_acls] == [(BOB, Op.WRITE)]
    assert len(c.authorizer or ()) == 2


def test_acl_apis_need_alter_or_describe_on_the_cluster() -> None:
    c = secured_cluster()
    refused = call(c, CreateAclsRequest(creations=[creation(ALICE, Op.ALL)]), 3, ALICE)
    assert refused.results[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert len(c.authorizer or ()) == 0
    assert call(c, describe_acls(), 3, ALICE).error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    allow(c, ALICE, Op.DESCRIBE, Type.CLUSTER)
    assert call(c, describe_acls(), 3, ALICE).error_code == 0


def test_describe_cluster_gives_authorized_operations_only_to_who_may_describe_it() -> None:
    c = secured_cluster()
    request = DescribeClusterRequest(include_cluster_authorized_operations=True)
    assert call(c, request, 1, ALICE).authorized_operations == set()
    allow(c, ALICE, Op.ALTER, Type.CLUSTER)
    assert call(c, request, 1, ALICE).authorized_operations == {Op.ALTER, Op.DESCRIBE}
