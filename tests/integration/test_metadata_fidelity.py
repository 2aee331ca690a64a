"""Metadata operations as Kafka's controller and KafkaApis answer them (issue 11, sections 2 and 4).

Bounded operations: a CreateTopics asking for more than 10,000 partitions, or writing more than
10,000 metadata records, is one POLICY_VIOLATION and creates nothing; CreatePartitions, bounded by
the same records-per-operation limit, refuses the overflowing topic alone. Internal topics:
`__consumer_offsets` and `__transaction_state` appear once their coordinators are first needed and
are flagged internal. Manual replica assignments naming unknown brokers are refused. Authorized
operations come back as Kafka sends them with no authorizer.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    DescribeClusterRequest,
    DescribeGroupsRequest,
    DescribeTopicPartitionsRequest,
    FindCoordinatorRequest,
    MetadataRequest,
)
from minibroker.testing.process import start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.clients import ok
from tests.integration.test_groups_wire import join_new, sync
from tests.integration.test_wire_protocol import create_topic, partition_response, produce_request

POLICY = ErrorCode.POLICY_VIOLATION
TOO_MANY_PARTITIONS = "Excessively large number of partitions per request."
TOO_LARGE_BATCH = "Unable to perform excessively large batch operation."
NOT_REQUESTED = -(2**31)


def coordinator_partition(key: str, partitions: int) -> int:
    """Kafka's partitionFor: Utils.abs(key.hashCode()) % partitions, with Java's String.hashCode."""
    h = 0
    for char in key:  # the keys here are ASCII: one UTF-16 unit each
        h = (31 * h + ord(char)) % 2**32
    h = h - 2**32 if h >= 2**31 else h
    return (0 if h == -(2**31) else abs(h)) % partitions


def bits(operations: set[int] | None) -> int:
    """The int32 on the wire of a bitfield the protocol engine decodes as a set of bits (None: MIN_VALUE)."""
    return NOT_REQUESTED if operations is None else sum(1 << b for b in operations)

# AclOperation bits of AclEntry.supportedOperations: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7,
# DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12
TOPIC_OPS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
GROUP_OPS = sum(1 << op for op in (3, 6, 8, 10, 11))
CLUSTER_OPS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))


@pytest.fixture(scope="module")
def broker3():
    process = start_broker(extra_args=("--nodes", "3"))
    yield process
    process.stop()


def creatable(name: str, partitions: int = 1, replication: int = 1, configs: dict[str, str] | None = None,
              assignments: list[list[int]] | None = None) -> Any:
    topic = CreateTopicsRequest.CreatableTopic
    return topic(name=name, num_partitions=partitions, replication_factor=replication,
                 assignments=[topic.CreatableReplicaAssignment(partition_index=i, broker_ids=b)
                              for i, b in enumerate(assignments or [])],
                 configs=[topic.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()])


def create(wire: WireClient, *topics: Any, validate_only: bool = False) -> Any:
    return wire.request(CreateTopicsRequest(topics=list(topics), timeout_ms=5000, validate_only=validate_only), 7)


def grow(wire: WireClient, name: str, count: int, assignments: list[list[int]] | None = None,
         validate_only: bool = False) -> Any:
    topic = CreatePartitionsRequest.CreatePartitionsTopic
    wanted = topic(name=name, count=count, assignments=None if assignments is None else [
        topic.CreatePartitionsAssignment(broker_ids=b) for b in assignments])
    return wire.request(CreatePartitionsRequest(topics=[wanted], timeout_ms=5000, validate_only=validate_only), 3)


def metadata(wire: WireClient, *names: str, version: int = 12, auto_create: bool = False, **flags: bool) -> Any:
    topics = None if not names else [MetadataRequest.MetadataRequestTopic(name=n) for n in names]
    return wire.request(MetadataRequest(topics=topics, allow_auto_topic_creation=auto_create, **flags), version)


def all_topic_names(wire: WireClient) -> set[str]:
    return {t.name for t in metadata(wire).topics}


def partition_count(wire: WireClient, name: str) -> int:
    entry = metadata(wire, name).topics[0]
    assert entry.error_code == 0, entry
    return len(entry.partitions)


def results(response: Any) -> list[tuple[str, int, str | None]]:
    return [(t.name, t.error_code, t.error_message) for t in response.topics]


# -- 2. bounded metadata operations ------------------------------------------------------------


def test_create_topics_asking_for_int_max_partitions_is_a_policy_violation_and_the_broker_keeps_answering(wire):
    huge, small = unique_topic("huge"), unique_topic("small")
    started = time.monotonic()
    response = create(wire, creatable(huge, 2_147_483_647), creatable(small, 1))
    assert results(response) == [(huge, POLICY, TOO_MANY_PARTITIONS), (small, POLICY, TOO_MANY_PARTITIONS)]
    assert [(t.num_partitions, t.replication_factor, t.configs) for t in response.topics] == [(-1, -1, [])] * 2
    assert time.monotonic() - started < 5
    assert {huge, small}.isdisjoint(all_topic_names(wire))


def test_create_topics_counts_partitions_across_the_whole_request(wire):
    names = [unique_topic("sum") for _ in range(3)]
    response = create(wire, creatable(names[0], 5000), creatable(names[1], 5000), creatable(names[2], 1))
    assert results(response) == [(n, POLICY, TOO_MANY_PARTITIONS) for n in names]
    assert set(names).isdisjoint(all_topic_names(wire))


def test_create_topics_partition_bound_refuses_every_topic_even_invalid_or_duplicate_ones(wire):
    big, dup = unique_topic("big"), unique_topic("dup")
    response = create(wire, creatable(big, 10_001), creatable("bad name", 1), creatable(dup, 1), creatable(dup, 1))
    assert results(response) == [(big, POLICY, TOO_MANY_PARTITIONS), ("bad name", POLICY, TOO_MANY_PARTITIONS),
                                 (dup, POLICY, TOO_MANY_PARTITIONS), (dup, POLICY, TOO_MANY_PARTITIONS)]
    assert {big, dup}.isdisjoint(all_topic_names(wire))


def test_create_topics_over_ten_thousand_metadata_records_is_an_excessively_large_batch(wire):
    # 1 TopicRecord + 10,000 PartitionRecords; then 9,999 partitions plus one ConfigRecord
    whole, configured, fine = unique_topic("records"), unique_topic("configured"), unique_topic("fine")
    for validate_only in (True, False):
        assert results(create(wire, creatable(whole, 10_000), validate_only=validate_only)) == [
            (whole, POLICY, TOO_LARGE_BATCH)]
    response = create(wire, creatable(fine, 1), creatable(configured, 9_998, configs={"retention.ms": "1000"}))
    assert results(response) == [(fine, POLICY, TOO_LARGE_BATCH), (configured, POLICY, TOO_LARGE_BATCH)]
    assert {whole, configured, fine}.isdisjoint(all_topic_names(wire))


def test_create_topics_records_of_refused_topics_do_not_count(wire):
    exists, fresh = unique_topic("exists"), unique_topic("fresh")
    create_topic(wire, exists)
    response = create(wire, creatable(exists, 5000), creatable(fresh, 4999), validate_only=True)
    assert results(response) == [(exists, ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{exists}' already exists."),
                                 (fresh, 0, None)]
    assert response.topics[1].num_partitions == 4999


def test_create_topics_at_the_record_bound_is_accepted(wire):
    name = unique_topic("bound")
    response = create(wire, creatable(name, 9_999), validate_only=True)
    assert results(response) == [(name, 0, None)] and response.topics[0].num_partitions == 9_999
    assert name not in all_topic_names(wire)


def test_create_partitions_over_the_record_bound_fails_that_topic_alone_and_grows_nothing(wire):
    first, second = unique_topic("grow-a"), unique_topic("grow-b")
    create_topic(wire, first)
    create_topic(wire, second)
    started = time.monotonic()
    response = grow(wire, first, 2_147_483_647)
    assert [(r.name, r.error_code, r.error_message) for r in response.results] == [
        (first, ErrorCode.UNKNOWN_SERVER_ERROR, None)]
    assert time.monotonic() - started < 5
    assert partition_count(wire, first) == 1

    topic = CreatePartitionsRequest.CreatePartitionsTopic
    response = wire.request(CreatePartitionsRequest(topics=[
        topic(name=first, count=4, assignments=None), topic(name=second, count=10_000, assignments=None),
        topic(name=unique_topic("missing"), count=2, assignments=None)], timeout_ms=5000, validate_only=False), 3)
    assert [(r.error_code, r.error_message) for r in response.results] == [
        (0, None), (ErrorCode.UNKNOWN_SERVER_ERROR, None), (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)]
    assert (partition_count(wire, first), partition_count(wire, second)) == (4, 1)


def test_auto_creation_beyond_the_bound_creates_nothing(broker_factory):
    big = broker_factory("num.partitions=10000")
    with WireClient(big.host, big.port) as wire:
        name = unique_topic("auto")
        entry = metadata(wire, name, auto_create=True).topics[0]
        assert (entry.name, entry.error_code, entry.partitions) == (name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
        assert results(create(wire, creatable(name, -1))) == [(name, POLICY, TOO_LARGE_BATCH)]
        assert name not in all_topic_names(wire)


def test_auto_creation_of_one_metadata_request_is_bounded_as_one_create_topics(broker_factory):
    mid = broker_factory("num.partitions=4000")
    with WireClient(mid.host, mid.port) as wire:
        names = [unique_topic("auto") for _ in range(3)]
        response = metadata(wire, *names, auto_create=True)
        assert [(t.name, t.error_code) for t in response.topics] == [
            (n, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) for n in names]
        assert set(names).isdisjoint(all_topic_names(wire))
        response = metadata(wire, *names[:2], auto_create=True)
        assert [(t.error_code, len(t.partitions)) for t in response.topics] == [(0, 4000), (0, 4000)]


def test_create_topics_and_partitions_answer_as_the_kraft_controller_does(wire):
    dup, good, zero, no_rf = (unique_topic(p) for p in ("dup", "good", "zero", "norf"))
    response = create(wire, creatable(dup), creatable(good, 2), creatable(dup), creatable(zero, 0),
                      creatable(no_rf, 1, 0))
    assert results(response) == [
        (good, 0, None),
        (zero, ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value."),
        (no_rf, ErrorCode.INVALID_REPLICATION_FACTOR,
         "Replication factor must be larger than 0, or -1 to use the default value."),
        (dup, ErrorCode.INVALID_REQUEST, "Duplicate topic name.")]
    assert response.topics[1].configs == []
    topic = CreatePartitionsRequest.CreatePartitionsTopic
    missing = unique_topic("missing")
    answer = wire.request(CreatePartitionsRequest(topics=[
        topic(name=good, count=2, assignments=None), topic(name=missing, count=3, assignments=None),
        topic(name=dup, count=3, assignments=None), topic(name=dup, count=4, assignments=None),
        topic(name=no_rf, count=1, assignments=None)],
        timeout_ms=5000, validate_only=False), 3)
    assert [(r.name, r.error_code, r.error_message) for r in answer.results] == [
        (dup, ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        (good, ErrorCode.INVALID_PARTITIONS, "Topic already has 2 partition(s)."),
        (missing, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None),
        (no_rf, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)]
    shrink = grow(wire, good, 1).results[0]
    assert (shrink.error_code, shrink.error_message) == (
        ErrorCode.INVALID_PARTITIONS, f"The topic {good} currently has 2 partition(s); 1 would not be an increase.")


# -- 4. internal topics ------------------------------------------------------------------------


def test_find_coordinator_creates_consumer_offsets_as_an_internal_topic_led_by_the_coordinator(broker3):
    group = unique_topic("group")
    with WireClient(broker3.host, broker3.port) as wire:
        assert "__consumer_offsets" not in all_topic_names(wire)
        found = wire.request(FindCoordinatorRequest(key=group, key_type=0), 3)
        assert found.error_code == 0
        internal = {t.name: t for t in metadata(wire).topics}["__consumer_offsets"]
        assert internal.is_internal and internal.error_code == 0 and len(internal.partitions) == 50
        assert all(len(p.replica_nodes) == 3 for p in internal.partitions)
        assert found.node_id == internal.partitions[coordinator_partition(group, 50)].leader_id
        assert not any(t.is_internal for t in metadata(wire).topics if t.name != "__consumer_offsets")


def test_transactional_find_coordinator_creates_transaction_state(broker3):
    txn = unique_topic("txn")
    with WireClient(broker3.host, broker3.port) as wire:
        found = wire.request(FindCoordinatorRequest(key_type=1, coordinator_keys=[txn]), 4).coordinators[0]
        assert found.error_code == 0
        entry = metadata(wire, "__transaction_state").topics[0]
        assert (entry.error_code, entry.is_internal, len(entry.partitions)) == (0, True, 50)
        assert found.node_id == entry.partitions[coordinator_partition(txn, 50)].leader_id


def test_internal_topics_are_sized_by_the_offsets_and_transaction_state_configs(broker_factory):
    # the settings every single-broker docker-compose file carries
    small = broker_factory("offsets.topic.num.partitions=3", "offsets.topic.replication.factor=1",
                           "transaction.state.log.num.partitions=2", "transaction.state.log.replication.factor=1")
    group, txn = unique_topic("group"), unique_topic("txn")
    with WireClient(small.host, small.port) as wire:
        assert wire.request(FindCoordinatorRequest(key=group, key_type=0), 3).error_code == 0
        assert wire.request(FindCoordinatorRequest(key_type=1, coordinator_keys=[txn]), 4).coordinators[0] \
            .error_code == 0
        sizes = {t.name: (len(t.partitions), {len(p.replica_nodes) for p in t.partitions})
                 for t in metadata(wire, "__consumer_offsets", "__transaction_state").topics}
        assert sizes == {"__consumer_offsets": (3, {1}), "__transaction_state": (2, {1})}


def test_internal_topics_refuse_produce_and_recreation(wire):
    assert wire.request(FindCoordinatorRequest(key=unique_topic("g"), key_type=0), 3).error_code == 0
    batch = records.build_batch([(None, b"x")], timestamp=int(time.time() * 1000))
    answer = partition_response(wire.request(produce_request("__consumer_offsets", batch), 9))
    assert answer.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert results(create(wire, creatable("__consumer_offsets", 1))) == [
        ("__consumer_offsets", ErrorCode.TOPIC_ALREADY_EXISTS, "Topic '__consumer_offsets' already exists.")]
    described = wire.request(DescribeTopicPartitionsRequest(topics=[
        DescribeTopicPartitionsRequest.TopicRequest(name="__consumer_offsets")], response_partition_limit=2000,
        cursor=None), 0).topics[0]
    assert (described.error_code, described.is_internal, len(described.partitions)) == (0, True, 50)


def test_metadata_flags_an_unknown_internal_topic_name_as_internal(broker_factory):
    fresh = broker_factory("auto.create.topics.enable=false")
    with WireClient(fresh.host, fresh.port) as wire:
        entry = metadata(wire, "__transaction_state", auto_create=True).topics[0]
        assert (entry.error_code, entry.is_internal) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, True)


# -- 4. manual replica assignments -------------------------------------------------------------


def test_create_partitions_with_an_unregistered_broker_is_an_invalid_replica_assignment(broker3):
    name = unique_topic("assign")
    with WireClient(broker3.host, broker3.port) as wire:
        create_topic(wire, name)
        refused = grow(wire, name, 2, [[99]]).results[0]
        assert (refused.error_code, refused.error_message) == (
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes broker 99, but no such broker is registered.")
        cases = [([[1], [2]], 2,
                  "Attempted to add 1 additional partition(s), but only 2 assignment(s) were specified."),
                 ([[1, 1]], 2, "The manual partition assignment includes the broker 1 more than once."),
                 ([[]], 2, "The manual partition assignment includes an empty replica list."),
                 ([[1, 2]], 2, "The manual partition assignment includes a partition with 2 replica(s), but this is "
                  "not consistent with previous partitions, which have 1 replica(s).")]
        for assignments, count, message in cases:
            answer = grow(wire, name, count, assignments).results[0]
            assert (answer.error_code, answer.error_message) == (ErrorCode.INVALID_REPLICA_ASSIGNMENT, message)
        assert partition_count(wire, name) == 1
        assert grow(wire, name, 3, [[2], [1]]).results[0].error_code == 0
        assert [p.leader_id for p in metadata(wire, name).topics[0].partitions][1:] == [2, 1]


def test_create_topics_with_an_unregistered_broker_is_an_invalid_replica_assignment(broker3):
    name = unique_topic("assign")
    with WireClient(broker3.host, broker3.port) as wire:
        response = create(wire, creatable(name, -1, -1, assignments=[[0], [7]]))
        assert results(response) == [(name, ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                      "The manual partition assignment includes broker 7, but no such broker is "
                                      "registered.")]
        assert name not in all_topic_names(wire)
        assert results(create(wire, creatable(name, -1, -1, assignments=[[2, 0], [1, 2]]))) == [(name, 0, None)]
        assert [p.replica_nodes for p in metadata(wire, name).topics[0].partitions] == [[2, 0], [1, 2]]


# -- 4. authorized operations ------------------------------------------------------------------


def test_metadata_returns_authorized_operations_when_asked(wire):
    name = unique_topic("ops")
    create_topic(wire, name)
    for version in (8, 10):
        asked = metadata(wire, name, "missing-ops-topic", version=version, include_cluster_authorized_operations=True,
                         include_topic_authorized_operations=True)
        assert bits(asked.authorized_operations) == CLUSTER_OPS
        assert [(t.error_code, bits(t.authorized_operations)) for t in asked.topics] == [
            (0, TOPIC_OPS), (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, TOPIC_OPS)]
    plain = metadata(wire, name, version=12)
    assert bits(plain.topics[0].authorized_operations) == NOT_REQUESTED
    assert bits(metadata(wire, name, version=12, include_topic_authorized_operations=True).topics[0]
                .authorized_operations) == TOPIC_OPS
    assert bits(metadata(wire, name, version=9, include_cluster_authorized_operations=False,
                         include_topic_authorized_operations=False).authorized_operations) == NOT_REQUESTED


def test_describe_cluster_returns_cluster_operations_when_asked(wire):
    asked = wire.request(DescribeClusterRequest(include_cluster_authorized_operations=True), 0)
    assert (asked.error_code, bits(asked.authorized_operations)) == (0, CLUSTER_OPS)
    plain = wire.request(DescribeClusterRequest(include_cluster_authorized_operations=False, endpoint_type=1,
                                                include_fenced_brokers=False), 2)
    assert bits(plain.authorized_operations) == NOT_REQUESTED


def test_describe_cluster_refuses_other_endpoint_types_as_a_broker_listener(wire):
    for endpoint_type, code, message in [
            (2, ErrorCode.MISMATCHED_ENDPOINT_TYPE,
             "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"),
            (0, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 0"),
            (3, ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 3")]:
        answer = wire.request(DescribeClusterRequest(include_cluster_authorized_operations=True,
                                                     endpoint_type=endpoint_type, include_fenced_brokers=False), 2)
        assert (answer.error_code, answer.error_message, answer.cluster_id, answer.controller_id, answer.brokers,
                answer.endpoint_type, bits(answer.authorized_operations)) == (
            code, message, "", -1, [], 1, NOT_REQUESTED)


def test_describe_groups_returns_group_operations_for_groups_described_without_error(wire):
    group = unique_topic("g")
    joined = join_new(wire, group)
    sync(wire, group, joined.generation_id, joined.member_id, [(joined.member_id, b"a")])
    request = DescribeGroupsRequest(groups=[group, "no-such-group"], include_authorized_operations=True)
    described = wire.request(request, 6).groups
    assert [(g.error_code, bits(g.authorized_operations)) for g in described] == [
        (0, GROUP_OPS), (ErrorCode.GROUP_ID_NOT_FOUND, NOT_REQUESTED)]
    assert bits(wire.request(request, 5).groups[1].authorized_operations) == GROUP_OPS  # a Dead entry, no error
    request = DescribeGroupsRequest(groups=[group], include_authorized_operations=False)
    assert bits(wire.request(request, 6).groups[0].authorized_operations) == NOT_REQUESTED


def test_describe_topic_partitions_returns_topic_operations(wire):
    name = unique_topic("dtp")
    create_topic(wire, name)
    described = wire.request(DescribeTopicPartitionsRequest(topics=[
        DescribeTopicPartitionsRequest.TopicRequest(name=name)], response_partition_limit=2000, cursor=None), 0)
    assert [(t.name, t.topic_authorized_operations) for t in described.topics] == [(name, TOPIC_OPS)]


def test_delete_topics_of_an_internal_topic_is_allowed_as_in_kraft(broker_factory):
    fresh = broker_factory()
    with WireClient(fresh.host, fresh.port) as wire:
        assert wire.request(FindCoordinatorRequest(key="g", key_type=0), 3).error_code == 0
        deleted = wire.request(DeleteTopicsRequest(topic_names=["__consumer_offsets"], timeout_ms=5000), 5)
        assert [(r.name, r.error_code) for r in deleted.responses] == [("__consumer_offsets", 0)]
        assert wire.request(FindCoordinatorRequest(key="g", key_type=0), 3).error_code == 0
        assert partition_count(wire, "__consumer_offsets") == 50


# -- real clients ------------------------------------------------------------------------------


def test_java_admin_lists_consumer_offsets_only_when_internal_topics_are_asked_for(java, broker_factory):
    fresh = broker_factory()
    topic, group = unique_topic("java-internal"), unique_topic("java-group")
    before, created, committed, plain, internal, described = java.scenario(fresh, "MetadataFidelity", (
        "list-internal", f"create {topic} 1", f"commit {group} {topic}", "list", "list-internal",
        "describe __consumer_offsets"))
    assert "__consumer_offsets" not in ok(before)["topics"]
    ok(created)
    ok(committed)
    assert topic in ok(plain)["topics"] and "__consumer_offsets" not in plain["topics"]
    assert {topic, "__consumer_offsets"} <= set(ok(internal)["topics"])
    assert ok(internal)["internal"] == ["__consumer_offsets"]
    assert (ok(described)["internal"], described["partitions"]) == (True, 50)


def test_java_admin_reads_authorized_operations(java, broker):
    topic, group = unique_topic("java-ops"), unique_topic("java-ops-group")
    created, committed, topic_ops, cluster_ops, group_ops = java.scenario(broker, "MetadataFidelity", (
        f"create {topic} 1", f"commit {group} {topic}", f"topic-ops {topic}", "cluster-ops", f"group-ops {group}"))
    ok(created)
    ok(committed)
    assert ok(topic_ops)["operations"] == ["ALTER", "ALTER_CONFIGS", "CREATE", "DELETE", "DESCRIBE",
                                           "DESCRIBE_CONFIGS", "READ", "WRITE"]
    assert ok(cluster_ops)["operations"] == ["ALTER", "ALTER_CONFIGS", "CLUSTER_ACTION", "CREATE", "DESCRIBE",
                                             "DESCRIBE_CONFIGS", "IDEMPOTENT_WRITE"]
    assert ok(group_ops)["operations"] == ["ALTER_CONFIGS", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ"]


def test_java_admin_create_partitions_on_an_unknown_broker_is_refused(java, broker):
    topic = unique_topic("java-assign")
    created, refused, described = java.scenario(broker, "MetadataFidelity", (
        f"create {topic} 1", f"add-partitions {topic} 2 42", f"partitions {topic}"))
    ok(created)
    assert (refused["ok"], refused.get("error"), refused.get("message")) == (
        False, "InvalidReplicaAssignmentException",
        "The manual partition assignment includes broker 42, but no such broker is registered.")
    assert ok(described)["partitions"] == 1


def test_java_admin_create_topics_beyond_the_bound_is_a_policy_violation(java, broker):
    topic = unique_topic("java-huge")
    refused, listed = java.scenario(broker, "MetadataFidelity", (f"create {topic} 2147483647", "list"))
    assert (refused["ok"], refused.get("error"), refused.get("message")) == (
        False, "PolicyViolationException", TOO_MANY_PARTITIONS)
    assert topic not in ok(listed)["topics"]


def test_confluent_list_topics_shows_consumer_offsets_after_a_group_commit(broker_factory):
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient

    fresh = broker_factory()
    topic = unique_topic("confluent-internal")
    admin = AdminClient({"bootstrap.servers": fresh.bootstrap_servers})
    producer = Producer({"bootstrap.servers": fresh.bootstrap_servers})
    producer.produce(topic, b"x")
    assert producer.flush(10) == 0
    assert "__consumer_offsets" not in admin.list_topics(timeout=10).topics
    consumer = Consumer({"bootstrap.servers": fresh.bootstrap_servers, "group.id": unique_topic("g"),
                         "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(topic, 0, 1)], asynchronous=False)
    consumer.close()
    listed = admin.list_topics(timeout=10).topics
    assert "__consumer_offsets" in listed and len(listed["__consumer_offsets"].partitions) == 50


def test_kafka_python_describes_consumer_offsets_as_internal_with_authorized_operations(broker_factory):
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    fresh = broker_factory()
    admin = KafkaAdminClient(bootstrap_servers=fresh.bootstrap_servers)
    try:
        topic = unique_topic("kp-internal")
        with WireClient(fresh.host, fresh.port) as wire:
            create_topic(wire, topic)
        consumer = KafkaConsumer(bootstrap_servers=fresh.bootstrap_servers, group_id=unique_topic("g"),
                                 enable_auto_commit=False)
        consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(0, "", -1)})
        consumer.close()
        described = {t["name"]: t for t in admin.describe_topics(["__consumer_offsets", topic])}
        assert described["__consumer_offsets"]["is_internal"] is True
        assert described[topic]["is_internal"] is False
        # kafka-python asks for the topic's authorized operations
        assert sorted(described[topic]["authorized_operations"]) == [
            "ALTER", "ALTER_CONFIGS", "CREATE", "DELETE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE"]
    finally:
        admin.close()
