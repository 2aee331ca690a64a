"""Share groups (KIP-932) on the wire with a manual clock: heartbeats, share sessions, locks and acknowledgements.

The behaviours asserted here were read from Apache Kafka 4.3.1 answering the same requests.
"""

from __future__ import annotations

from typing import Any

import pytest

from minibroker.apis import share_fetch
from minibroker.apis.context import RequestContext
from minibroker.apis.feature_levels import new_feature_levels
from minibroker.core.acls import AclOperation, ResourceType
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import Node
from minibroker.core.config import BrokerConfig, ConfigError
from minibroker.core.pending import Pending
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    AlterShareGroupOffsetsRequest,
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
    DeleteGroupsRequest,
    DeleteShareGroupOffsetsRequest,
    DescribeGroupsRequest,
    DescribeShareGroupOffsetsRequest,
    FindCoordinatorRequest,
    IncrementalAlterConfigsRequest,
    JoinGroupRequest,
    ListGroupsRequest,
    ShareAcknowledgeRequest,
    ShareFetchRequest,
    ShareGroupDescribeRequest,
    ShareGroupHeartbeatRequest,
)

from .authz import allow, call, secured_cluster

F = ShareFetchRequest
A = ShareAcknowledgeRequest
ACCEPT, RELEASE, REJECT = 1, 2, 3


def plain_cluster(clock: ManualClock | None = None) -> Cluster:
    """One node, topic t, and group g reading from the earliest offset (a share partition starts where its first
    share fetch finds the log under share.auto.offset.reset, latest by default)."""
    cluster = Cluster(BrokerConfig({"node.id": 1}), clock=clock or ManualClock(1_700_000_000_000))
    cluster.create_topic("t", 1)
    set_group_config(cluster, "share.auto.offset.reset", "earliest")
    return cluster


def produce(cluster: Cluster, count: int) -> None:
    batch = records.build_batch([(None, b"v%d" % i) for i in range(count)], timestamp=cluster.clock.now_ms())
    cluster.append(cluster.topics["t"].partitions[0], batch)


def heartbeat(cluster: Cluster, member: str, epoch: int, group: str = "g") -> Any:
    return call(cluster, ShareGroupHeartbeatRequest(group_id=group, member_id=member, member_epoch=epoch, rack_id=None,
                                                    subscribed_topic_names=["t"] if epoch == 0 else None), 1)


def fetch(cluster: Cluster, member: str, epoch: int, acks: list[tuple[int, int, list[int]]] | None = None,
          max_records: int = 100, wait: int = 0, version: int = 1) -> Any:
    return call(cluster, fetch_request(cluster, member, epoch, acks, max_records, wait, version), version)


def fetch_request(cluster: Cluster, member: str, epoch: int, acks: list[tuple[int, int, list[int]]] | None = None,
                  max_records: int = 100, wait: int = 0, version: int = 1) -> Any:
    batches = [F.FetchTopic.FetchPartition.AcknowledgementBatch(first_offset=f, last_offset=la, acknowledge_types=t)
               for f, la, t in acks or []]
    topics = [F.FetchTopic(topic_id=cluster.topics["t"].topic_id, partitions=[
        F.FetchTopic.FetchPartition(partition_index=0, acknowledgement_batches=batches)])]
    extra = {"share_acquire_mode": 0, "is_renew_ack": False} if version >= 2 else {}
    return F(group_id="g", member_id=member, share_session_epoch=epoch, max_wait_ms=wait, min_bytes=1,
             max_bytes=1 << 20, max_records=max_records, batch_size=max_records, topics=topics,
             forgotten_topics_data=[], **extra)


def acknowledge(cluster: Cluster, member: str, epoch: int, acks: list[tuple[int, int, list[int]]]) -> Any:
    batches = [A.AcknowledgeTopic.AcknowledgePartition.AcknowledgementBatch(first_offset=f, last_offset=la,
                                                                            acknowledge_types=t) for f, la, t in acks]
    return call(cluster, A(group_id="g", member_id=member, share_session_epoch=epoch, topics=[A.AcknowledgeTopic(
        topic_id=cluster.topics["t"].topic_id, partitions=[A.AcknowledgeTopic.AcknowledgePartition(
            partition_index=0, acknowledgement_batches=batches)])]), 1)


def acquired(answer: Any) -> list[tuple[int, int, int]]:
    return [(r.first_offset, r.last_offset, r.delivery_count)
            for t in answer.responses for p in t.partitions for r in p.acquired_records]


def test_share_apis_answer_unsupported_version_when_share_version_is_off():
    cluster = plain_cluster()
    cluster.features = new_feature_levels(cluster, {"share.version": 0})
    assert heartbeat(cluster, "m1", 0).error_code == ErrorCode.UNSUPPORTED_VERSION
    assert fetch(cluster, "m1", 0).error_code == ErrorCode.UNSUPPORTED_VERSION
    assert acknowledge(cluster, "m1", 1, []).error_code == ErrorCode.UNSUPPORTED_VERSION
    described = call(cluster, ShareGroupDescribeRequest(group_ids=["g"], include_authorized_operations=False), 1)
    assert [g.error_code for g in described.groups] == [ErrorCode.UNSUPPORTED_VERSION]


def test_members_share_the_partition_and_records_go_to_one_at_a_time():
    clock = ManualClock()
    cluster = plain_cluster(clock)
    first, second = heartbeat(cluster, "m1", 0), heartbeat(cluster, "m2", 0)
    # as Kafka 4.3.1: the first target is computed before the share partition is initialized, and the next one
    # waits for share.assignment.interval.ms
    assert [(a.member_epoch, a.assignment.topic_partitions) for a in (first, second)] == [(2, []), (2, [])]
    clock.advance(1000)
    topic_id = cluster.topics["t"].topic_id
    for member in ("m1", "m2"):
        answer = heartbeat(cluster, member, 2)
        assert (answer.member_epoch, [(tp.topic_id, tp.partitions) for tp in answer.assignment.topic_partitions]) \
            == (4, [(topic_id, [0])])
    for _ in range(5):
        produce(cluster, 1)  # one batch each: a share fetch acquires whole batches
    assert acquired(fetch(cluster, "m1", 0, max_records=3)) == [(0, 2, 1)]
    assert acquired(fetch(cluster, "m2", 0)) == [(3, 4, 1)]
    assert acquired(fetch(cluster, "m2", 1)) == []
    # m1 accepts 0, releases 1, rejects 2 on its next fetch; the released record goes to whoever fetches next
    answer = fetch(cluster, "m1", 1, acks=[(0, 2, [ACCEPT, RELEASE, REJECT])])
    assert answer.responses[0].partitions[0].acknowledge_error_code == 0
    assert acquired(answer) == [(1, 1, 2)]


def test_a_share_fetch_acquires_whole_batches_unless_v2_asks_for_the_record_limit():
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    heartbeat(cluster, "m2", 0)
    produce(cluster, 5)
    produce(cluster, 5)
    assert acquired(fetch(cluster, "m1", 0, max_records=3)) == [(0, 4, 1)]  # MaxRecords exceeded to the batch's end
    request = fetch_request(cluster, "m2", 0, max_records=3, version=2)
    request.share_acquire_mode = 1  # record limit (KIP-1206)
    assert acquired(call(cluster, request, 2)) == [(5, 7, 1)]


def m1_holding_the_first_batch() -> tuple[ManualClock, Cluster]:
    """Two members with open share sessions (next epoch 1); m1 holds records 0-1 (delivery count 1), m2 got none."""
    clock = ManualClock()
    cluster = plain_cluster(clock)
    heartbeat(cluster, "m1", 0)
    heartbeat(cluster, "m2", 0)
    produce(cluster, 2)
    assert acquired(fetch(cluster, "m1", 0)) == [(0, 1, 1)]
    assert acquired(fetch(cluster, "m2", 0)) == []
    return clock, cluster


def test_records_come_back_when_the_acquisition_lock_runs_out():
    clock, cluster = m1_holding_the_first_batch()
    clock.advance(30_000)  # share.record.lock.duration.ms
    assert acquired(fetch(cluster, "m2", 1)) == [(0, 1, 2)]
    late = acknowledge(cluster, "m1", 1, [(0, 1, [ACCEPT])])
    assert late.responses[0].partitions[0].error_code == ErrorCode.INVALID_RECORD_STATE


def test_share_session_epochs_as_kafka():
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    assert fetch(cluster, "m1", 3).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert fetch(cluster, "m1", 0).error_code == 0
    assert fetch(cluster, "m1", 1).error_code == 0
    assert fetch(cluster, "m1", 1).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert acknowledge(cluster, "m1", 0, []).error_code == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert acknowledge(cluster, "m1", 2, []).error_code == 0
    closed = call(cluster, F(group_id="g", member_id="m1", share_session_epoch=-1, max_wait_ms=0, min_bytes=1,
                             max_bytes=1, max_records=1, batch_size=1, topics=[], forgotten_topics_data=[]), 1)
    assert closed.error_code == 0
    assert fetch(cluster, "m1", 4).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND


def test_closing_the_share_session_releases_what_the_member_holds():
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    heartbeat(cluster, "m2", 0)
    produce(cluster, 2)
    assert acquired(fetch(cluster, "m1", 0)) == [(0, 1, 1)]
    call(cluster, F(group_id="g", member_id="m1", share_session_epoch=-1, max_wait_ms=0, min_bytes=1, max_bytes=1,
                    max_records=1, batch_size=1, topics=[], forgotten_topics_data=[]), 1)
    assert acquired(fetch(cluster, "m2", 0)) == [(0, 1, 2)]


def test_a_share_fetch_with_nothing_to_acquire_waits_for_an_append():
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    fetch(cluster, "m1", 0)
    ctx = RequestContext(cluster, cluster.nodes[0], share_fetch.API_KEY, 1, 1, "test")
    pending = share_fetch.handle(fetch_request(cluster, "m1", 1, wait=5000), ctx)
    assert isinstance(pending, Pending) and not pending.done
    produce(cluster, 1)
    assert pending.done
    assert acquired(pending.result()) == [(0, 0, 1)]


def test_share_groups_are_listed_described_and_deleted():
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    listed = call(cluster, ListGroupsRequest(states_filter=[], types_filter=["share"]), 5)
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in listed.groups] == [
        ("g", "share", "Stable", "share")]
    described = call(cluster, ShareGroupDescribeRequest(group_ids=["g", "nope"], include_authorized_operations=False),
                     1)
    assert [(g.error_code, g.error_message, g.group_state, g.assignor_name) for g in described.groups] == [
        (0, None, "Stable", "simple"), (ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found.", "", "")]
    assert [m.member_id for m in described.groups[0].members] == ["m1"]
    delete = DeleteGroupsRequest(groups_names=["g"])
    assert [r.error_code for r in call(cluster, delete, 2).results] == [ErrorCode.NON_EMPTY_GROUP]
    assert heartbeat(cluster, "m1", -1).member_epoch == -1
    assert [r.error_code for r in call(cluster, delete, 2).results] == [0]


def test_nothing_is_acquired_before_an_assignment_initializes_the_share_partition():
    cluster = plain_cluster()
    produce(cluster, 2)
    assert acquired(fetch(cluster, "m1", 0)) == []  # as Kafka: no member was ever assigned the partition
    answer = fetch(cluster, "m1", 1, acks=[(0, 0, [ACCEPT])])
    assert (answer.responses[0].partitions[0].acknowledge_error_code,
            answer.responses[0].partitions[0].acknowledge_error_message) == (
        ErrorCode.INVALID_RECORD_STATE, "Batch record not found. The request batch offsets are not found in the cache.")


def test_describe_groups_sees_no_classic_group_in_a_share_group():
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    described = call(cluster, DescribeGroupsRequest(groups=["g"], include_authorized_operations=False), 5)
    assert [(g.error_code, g.group_state, g.protocol_type, g.members) for g in described.groups] == [
        (0, "Dead", "", [])]  # as Kafka 4.3.1 answers for a share group


def set_group_config(cluster: Cluster, name: str, value: str) -> None:
    resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    request = IncrementalAlterConfigsRequest(resources=[resource(
        resource_type=32, resource_name="g",  # GROUP
        configs=[resource.AlterableConfig(name=name, config_operation=0, value=value)])], validate_only=False)
    assert call(cluster, request, 1).responses[0].error_code == 0


def test_read_committed_share_group_never_delivers_aborted_records():
    cluster = plain_cluster()
    set_group_config(cluster, "share.isolation.level", "read_committed")
    set_group_config(cluster, "share.auto.offset.reset", "earliest")
    partition = cluster.topics["t"].partitions[0]
    error, producer_id, epoch = cluster.transactions.init_producer_id("tx", 60000, -1, -1)
    assert error == 0
    cluster.transactions.add_partitions("tx", producer_id, epoch, [("t", 0)])
    cluster.append(partition, records.build_batch([(None, b"aborted")] * 2, timestamp=cluster.clock.now_ms(),
                                                  producer_id=producer_id, producer_epoch=epoch, base_sequence=0,
                                                  transactional=True))
    produce(cluster, 1)  # offset 2, not transactional
    heartbeat(cluster, "m1", 0)
    assert acquired(fetch(cluster, "m1", 0)) == []  # the open transaction holds the LSO at 0
    assert cluster.transactions.end_txn("tx", producer_id, epoch, committed=False) == 0  # marker at offset 3
    produce(cluster, 1)  # offset 4
    # the aborted records 0-1 are archived, never handed out; the marker at 3 goes with its neighbours (a consumer
    # skips control batches)
    assert acquired(fetch(cluster, "m1", 1)) == [(2, 4, 1)]


def test_classic_and_consumer_apis_refuse_a_share_groups_id_as_kafka():
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    consumer = call(cluster, ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="c1", member_epoch=0, instance_id=None, rack_id=None, rebalance_timeout_ms=30000,
        subscribed_topic_names=["t"], subscribed_topic_regex=None, server_assignor=None, topic_partitions=[]), 1)
    assert (consumer.error_code, consumer.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                             "Group g is not a consumer group.")
    join = call(cluster, JoinGroupRequest(group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000,
                                          member_id="", group_instance_id=None, protocol_type="consumer",
                                          protocols=[("range", b"")], reason=None), 9)
    assert (join.error_code, join.member_id) == (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "")
    described = call(cluster, ConsumerGroupDescribeRequest(group_ids=["g"], include_authorized_operations=False), 1)
    assert [(g.error_code, g.error_message) for g in described.groups] == [
        (ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a consumer group.")]
    assert [(g.group_id, g.group_type) for g in call(cluster, ListGroupsRequest(states_filter=[], types_filter=[]),
                                                      5).groups] == [("g", "share")]


def waiting_fetch(cluster: Cluster, member: str, epoch: int) -> Pending:
    ctx = RequestContext(cluster, cluster.nodes[0], share_fetch.API_KEY, 1, 1, "test")
    pending = share_fetch.handle(fetch_request(cluster, member, epoch, wait=60_000), ctx)
    assert isinstance(pending, Pending) and not pending.done
    return pending


def m2_waits_after_m1_took(cluster: Cluster, records: int, expected: list[tuple[int, int, int]]) -> Pending:
    """Two members join; m1 takes the `records` produced (acquired as `expected`), m2's next fetch waits."""
    heartbeat(cluster, "m1", 0)
    heartbeat(cluster, "m2", 0)
    produce(cluster, records)
    assert acquired(fetch(cluster, "m1", 0)) == expected
    fetch(cluster, "m2", 0)
    return waiting_fetch(cluster, "m2", 1)


def test_a_lock_running_out_on_the_clock_wakes_a_waiting_share_fetch():
    clock = ManualClock()
    cluster = plain_cluster(clock)
    pending = m2_waits_after_m1_took(cluster, 2, [(0, 1, 1)])
    clock.advance(29_999)
    cluster.tick()
    assert not pending.done
    clock.advance(1)  # share.record.lock.duration.ms (30 s) after the acquisition
    cluster.tick()
    assert pending.done
    assert acquired(pending.result()) == [(0, 1, 2)]


def test_a_release_by_one_member_wakes_another_members_waiting_share_fetch():
    cluster = plain_cluster()
    pending = m2_waits_after_m1_took(cluster, 1, [(0, 0, 1)])
    assert acknowledge(cluster, "m1", 1, [(0, 0, [RELEASE])]).responses[0].partitions[0].error_code == 0
    assert pending.done
    assert acquired(pending.result()) == [(0, 0, 2)]


def test_a_member_timing_out_on_the_clock_loses_its_share_session_and_records():
    clock = ManualClock()
    cluster = plain_cluster(clock)
    pending = m2_waits_after_m1_took(cluster, 2, [(0, 1, 1)])
    epoch = 2
    for _ in range(2):  # m2 heartbeats on, m1 stays silent for share.session.timeout.ms (45 s)
        clock.advance(22_500)
        answer = heartbeat(cluster, "m2", epoch)
        assert answer.error_code == 0
        epoch = answer.member_epoch
        cluster.tick()
    assert pending.done  # m1 timed out: its records came back, waking m2's fetch
    assert acquired(pending.result()) == [(0, 1, 2)]
    assert fetch(cluster, "m1", 1).error_code == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert heartbeat(cluster, "m1", 2).error_code == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_topic_deleted_and_created_again_starts_a_new_share_partition():
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    produce(cluster, 3)
    assert acquired(fetch(cluster, "m1", 0)) == [(0, 2, 1)]
    cluster.delete_topic("t")
    cluster.create_topic("t", 1)
    epoch = heartbeat(cluster, "m1", 2).member_epoch
    heartbeat(cluster, "m1", epoch)  # the recreated partition is initialized again, at its (empty) log's end
    produce(cluster, 1)
    assert acquired(fetch(cluster, "m1", 1)) == [(0, 0, 1)]


def share_cluster(clock: ManualClock, **broker: Any) -> Cluster:
    configs = {"node.id": 1, **{"group.share." + name.replace("_", "."): value for name, value in broker.items()}}
    cluster = Cluster(BrokerConfig(configs, profile="latest"), clock=clock)
    cluster.create_topic("t", 1)
    set_group_config(cluster, "share.auto.offset.reset", "earliest")
    return cluster


def test_group_share_broker_configs_set_at_start_up_are_acted_on():
    clock = ManualClock()
    cluster = share_cluster(clock, record_lock_duration_ms=15_000, delivery_count_limit=2)
    heartbeat(cluster, "m1", 0)
    produce(cluster, 1)
    assert acquired(fetch(cluster, "m1", 0)) == [(0, 0, 1)]
    clock.advance(15_000)  # group.share.record.lock.duration.ms
    cluster.tick()
    assert acquired(fetch(cluster, "m1", 1)) == [(0, 0, 2)]
    clock.advance(15_000)
    cluster.tick()  # a second delivery timed out: group.share.delivery.count.limit=2 archives the record
    assert acquired(fetch(cluster, "m1", 2)) == []
    assert cluster.shares.coordinator.initialized_share_partition("g", "t", 0).start_offset == 1


def test_group_share_broker_configs_are_checked_at_start_up_as_kafka():
    # ShareGroupConfig.validate's and GroupCoordinatorConfig's messages (Kafka 4.3.1)
    for broker, message in [
        ({"record_lock_duration_ms": 10_000},
         "group.share.record.lock.duration.ms must be greater than or equal to "
         "group.share.min.record.lock.duration.ms"),
        ({"max_delivery_count_limit": 6, "delivery_count_limit": 7},
         "group.share.max.delivery.count.limit must be greater than or equal to group.share.delivery.count.limit"),
        ({"heartbeat_interval_ms": 20_000},
         "group.share.heartbeat.interval.ms must be less than or equal to group.share.max.heartbeat.interval.ms"),
    ]:
        with pytest.raises(ConfigError, match=f"^{message}$"):
            share_cluster(ManualClock(), **broker)


def test_share_group_config_bounds_as_kafka():
    cluster = share_cluster(ManualClock())
    resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    answers = []
    for name, value in [("share.delivery.count.limit", "11"), ("share.delivery.count.limit", "1"),
                        ("share.partition.max.record.locks", "5000"), ("share.assignment.interval.ms", "20000")]:
        request = IncrementalAlterConfigsRequest(resources=[resource(
            resource_type=32, resource_name="g",
            configs=[resource.AlterableConfig(name=name, config_operation=0, value=value)])], validate_only=True)
        answer = call(cluster, request, 1).responses[0]
        answers.append((answer.error_code, answer.error_message))
    # read from Kafka 4.3.1 answering the same requests
    assert answers == [
        (ErrorCode.INVALID_CONFIG,
         "share.delivery.count.limit must be less than or equal to group.share.max.delivery.count.limit"),
        (ErrorCode.INVALID_CONFIG,
         "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2"),
        (ErrorCode.INVALID_CONFIG, "share.partition.max.record.locks must be less than or equal to "
                                   "group.share.max.partition.max.record.locks"),
        (ErrorCode.INVALID_CONFIG,
         "share.assignment.interval.ms must be less than or equal to group.share.max.assignment.interval.ms")]


def describe_offsets(cluster: Cluster, group: str = "g", version: int = 1) -> list[tuple[str, int, int, int]]:
    D = DescribeShareGroupOffsetsRequest
    answer = call(cluster, D(groups=[D.DescribeShareGroupOffsetsRequestGroup(group_id=group, topics=None)]), version)
    assert [g.error_code for g in answer.groups] == [0]
    return [(t.topic_name, p.partition_index, p.start_offset, p.lag if version >= 1 else -2)
            for g in answer.groups for t in g.topics for p in t.partitions]


def alter_offsets(cluster: Cluster, topic: str, index: int, start: int, group: str = "g") -> Any:
    A2 = AlterShareGroupOffsetsRequest
    return call(cluster, A2(group_id=group, topics=[A2.AlterShareGroupOffsetsRequestTopic(topic_name=topic, partitions=[
        A2.AlterShareGroupOffsetsRequestTopic.AlterShareGroupOffsetsRequestPartition(partition_index=index,
                                                                                     start_offset=start)])]), 0)


def delete_offsets(cluster: Cluster, topic: str, group: str = "g") -> Any:
    X = DeleteShareGroupOffsetsRequest
    return call(cluster, X(group_id=group, topics=[X.DeleteShareGroupOffsetsRequestTopic(topic_name=topic)]), 0)


def test_share_group_offsets_described_altered_and_deleted_as_kafka():
    # the sequence and answers read from Kafka 4.3.1 (the same requests, a two-partition topic)
    cluster = plain_cluster()
    cluster.create_topic("t2", 2)
    assert describe_offsets(cluster) == []  # an unknown group: no topics, no error
    answer = alter_offsets(cluster, "t2", 0, 0)  # makes the group
    assert (answer.error_code, [(p.partition_index, p.error_code) for t in answer.responses for p in t.partitions]) \
        == (0, [(0, 0)])
    assert describe_offsets(cluster) == [("t2", 0, 0, 0)]
    unknown = alter_offsets(cluster, "nope", 0, 0)
    assert [(t.topic_id, p.error_code, p.error_message) for t in unknown.responses for p in t.partitions] == [
        (None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")]
    deleted = delete_offsets(cluster, "t2")
    assert (deleted.error_code, [t.error_code for t in deleted.responses]) == (0, [0])
    assert describe_offsets(cluster) == []
    missing = delete_offsets(cluster, "t2", group="other")
    assert (missing.error_code, missing.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group other not found.")
    call(cluster, ShareGroupHeartbeatRequest(group_id="g", member_id="m1", member_epoch=0, rack_id=None,
                                             subscribed_topic_names=["t2"]), 1)
    for refused in (alter_offsets(cluster, "t2", 0, 0), delete_offsets(cluster, "t2")):
        assert (refused.error_code, refused.error_message, refused.responses) == (
            ErrorCode.NON_EMPTY_GROUP, "The group is not empty.", [])
    # an assignment initialized the share partitions; no share fetch has read them: -1 as Kafka
    assert describe_offsets(cluster) == [("t2", 0, -1, -1), ("t2", 1, -1, -1)]
    assert describe_offsets(cluster, version=0) == [("t2", 0, -1, -2), ("t2", 1, -1, -2)]


def test_share_group_offsets_follow_what_is_acknowledged():
    cluster = plain_cluster()
    set_group_config(cluster, "share.auto.offset.reset", "earliest")
    produce(cluster, 1)
    produce(cluster, 1)
    produce(cluster, 1)
    heartbeat(cluster, "m1", 0)
    assert acquired(fetch(cluster, "m1", 0, max_records=1)) == [(0, 0, 1)]
    assert describe_offsets(cluster) == [("t", 0, -1, -1)]  # nothing written yet: Kafka 4.3.1 says -1 after a fetch
    fetch(cluster, "m1", 1, acks=[(0, 0, [ACCEPT])], max_records=1)  # accepts 0, acquires 1
    # as Kafka 4.3.1: the start offset from before the acknowledgement moved it, the accepted record not lagging
    assert describe_offsets(cluster) == [("t", 0, 0, 2)]
    heartbeat(cluster, "m1", -1)  # releases 1: written with the start offset the acceptance of 0 left
    assert describe_offsets(cluster) == [("t", 0, 1, 2)]
    assert alter_offsets(cluster, "t", 0, 2).error_code == 0  # the group is empty now
    assert describe_offsets(cluster) == [("t", 0, 2, 1)]
    heartbeat(cluster, "m2", 0)
    assert acquired(fetch(cluster, "m2", 0)) == [(2, 2, 1)]  # the share partition restarted at 2


def test_a_share_partition_starts_where_its_first_share_fetch_finds_the_log():
    # as Kafka 4.3.1 (read from it): under share.auto.offset.reset=latest, records produced after the member got
    # the partition but before its first share fetch are not delivered
    cluster = plain_cluster()
    set_group_config(cluster, "share.auto.offset.reset", "latest")
    heartbeat(cluster, "m1", 0)
    for _ in range(4):
        produce(cluster, 1)
    assert acquired(fetch(cluster, "m1", 0)) == []
    assert describe_offsets(cluster) == [("t", 0, -1, -1)]
    produce(cluster, 1)
    assert acquired(fetch(cluster, "m1", 1)) == [(4, 4, 1)]


def test_a_share_group_at_group_share_max_size_refuses_a_new_member_as_kafka():
    cluster = share_cluster(ManualClock(), max_size=2)
    assert [heartbeat(cluster, member, 0).error_code for member in ("m1", "m2")] == [0, 0]
    refused = heartbeat(cluster, "m3", 0)
    # Kafka 4.3.1's answer (read with its default of 200 members)
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.GROUP_MAX_SIZE_REACHED, "The share group has reached its maximum capacity of 2 members.")
    assert heartbeat(cluster, "m1", 0).error_code == 0  # a member already in may join again


# FindCoordinator share keys (key type 2, "groupId:topicId:partition"): answers read from Kafka 4.3.1 sending versions
# 0-6 as User:ANONYMOUS (PLAINTEXT), a super user and a user without ACLs (differential scenario find_coordinator_share)
ZERO_ID = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO: any well-formed topic id is a valid key, known or not
VALID_SHARE_KEYS = [f"g:{ZERO_ID}:0", f"g:{ZERO_ID}:0:", f"g:{ZERO_ID}==:007", f"g:{ZERO_ID}:-1", f"g:{ZERO_ID}:+3",
                    f" g :{ZERO_ID}:0", "g:Zm9vYmFyYmF6cXV4cXV1eA:0", f"g:{ZERO_ID[:-1]}B:0", f"g:-{ZERO_ID[1:]}:0",
                    f"g:{ZERO_ID}:2147483647"]
MALFORMED_SHARE_KEYS = ["abc", "", "g:notauuid:0", f"g:{ZERO_ID}:x", f" :{ZERO_ID}:0", "g::0", f"g:{ZERO_ID}: 1",
                        f"g:{ZERO_ID}=:0", f"g:+{ZERO_ID[1:]}:0", f"g:{ZERO_ID}:2147483648", "a:b:c:d", f"g:{ZERO_ID}",
                        f"g:{ZERO_ID}AA:0", f"g:{ZERO_ID}:1_0", f"g:{ZERO_ID} :0"]
INVALID_REQUEST_TEXT = ("This most likely occurs because of a request being malformed by the client library or the "
                        "message was sent to an incompatible broker. See the broker logs for more details.")


def coordinators(answer: Any) -> list[tuple[str, int, str, int]]:
    return [(c.key, c.error_code, c.error_message, c.node_id) for c in answer.coordinators]


@pytest.mark.parametrize("version", [1, 2, 3])
def test_find_coordinator_refuses_a_share_key_below_v6_with_the_default_message(version: int) -> None:
    answer = call(plain_cluster(), FindCoordinatorRequest(key=f"g:{ZERO_ID}:0", key_type=2), version)
    assert (answer.error_code, answer.error_message, answer.node_id, answer.host, answer.port) == (
        ErrorCode.INVALID_REQUEST, INVALID_REQUEST_TEXT, -1, "", -1)


@pytest.mark.parametrize("version", [4, 5])
def test_find_coordinator_v4_v5_refuse_each_share_key_with_an_empty_message(version: int) -> None:
    answer = call(plain_cluster(), FindCoordinatorRequest(key_type=2, coordinator_keys=[f"g:{ZERO_ID}:0", "abc"]),
                  version)
    assert coordinators(answer) == [(f"g:{ZERO_ID}:0", ErrorCode.INVALID_REQUEST, "", -1),
                                    ("abc", ErrorCode.INVALID_REQUEST, "", -1)]


def test_find_coordinator_v6_finds_the_share_coordinator_of_a_well_formed_share_key() -> None:
    answer = call(plain_cluster(), FindCoordinatorRequest(key_type=2,
                                                          coordinator_keys=VALID_SHARE_KEYS + MALFORMED_SHARE_KEYS), 6)
    assert coordinators(answer) == [(key, 0, "", 1) for key in VALID_SHARE_KEYS] + [
        (key, ErrorCode.INVALID_REQUEST, "", -1) for key in MALFORMED_SHARE_KEYS]


def test_find_coordinator_share_key_needs_cluster_action_else_every_key_is_refused() -> None:
    cluster = secured_cluster()
    cluster.create_topic("t", 1)
    keys = [f"g:{ZERO_ID}:0", "abc"]
    refused = call(cluster, FindCoordinatorRequest(key_type=2, coordinator_keys=keys), 6, principal="User:alice")
    assert coordinators(refused) == [(key, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.",
                                      -1) for key in keys]
    below_v6 = call(cluster, FindCoordinatorRequest(key_type=2, coordinator_keys=keys), 5, principal="User:alice")
    assert coordinators(below_v6) == [(key, ErrorCode.INVALID_REQUEST, "", -1) for key in keys]
    expected = [(keys[0], 0, "", 1), ("abc", ErrorCode.INVALID_REQUEST, "", -1)]
    assert coordinators(call(cluster, FindCoordinatorRequest(key_type=2, coordinator_keys=keys), 6,
                             principal="User:admin")) == expected
    allow(cluster, "User:alice", AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER)
    assert coordinators(call(cluster, FindCoordinatorRequest(key_type=2, coordinator_keys=keys), 6,
                             principal="User:alice")) == expected


def test_share_keys_spelled_differently_have_one_share_coordinator() -> None:
    nodes = [Node(node_id, "127.0.0.1", 9092 + node_id) for node_id in (1, 2, 3)]
    cluster = Cluster(BrokerConfig({"node.id": 1}), clock=ManualClock(), nodes=nodes)
    spellings = [f"g:{ZERO_ID}:7", f" g:{ZERO_ID}==:007", f"g:{ZERO_ID[:-1]}B:+7:"]
    many = [f"g{n}:{ZERO_ID}:{n}" for n in range(30)]
    answer = call(cluster, FindCoordinatorRequest(key_type=2, coordinator_keys=spellings + many), 6)
    found = [c.node_id for c in answer.coordinators]
    assert len(set(found[:3])) == 1  # SharePartitionKey.asCoordinatorKey: one key, one partition of the state topic
    assert set(found[3:]) == {1, 2, 3}  # spread over the nodes as the state topic's partitions are


# Renew acknowledgements (KIP-1222, AcknowledgeType 4): read from Kafka 4.3.1 (differential scenario share_renew_ack;
# the lock's timing with a 15 s share.record.lock.duration.ms on the wall clock)
RENEW = 4


def acknowledge_v2(cluster: Cluster, member: str, epoch: int, acks: list[tuple[int, int, list[int]]],
                   renew: bool = True, version: int = 2) -> Any:
    batches = [A.AcknowledgeTopic.AcknowledgePartition.AcknowledgementBatch(first_offset=f, last_offset=la,
                                                                            acknowledge_types=t) for f, la, t in acks]
    extra = {"is_renew_ack": renew} if version >= 2 else {}
    return call(cluster, A(group_id="g", member_id=member, share_session_epoch=epoch, topics=[A.AcknowledgeTopic(
        topic_id=cluster.topics["t"].topic_id, partitions=[A.AcknowledgeTopic.AcknowledgePartition(
            partition_index=0, acknowledgement_batches=batches)])], **extra), version)


def renew_fetch(cluster: Cluster, member: str, epoch: int, acks: list[tuple[int, int, list[int]]],
                renew: bool = True, **fields: int) -> Any:
    request = fetch_request(cluster, member, epoch, acks, version=2)
    request.is_renew_ack = renew
    request.max_records = request.batch_size = request.min_bytes = request.max_bytes = request.max_wait_ms = 0
    for name, value in fields.items():
        setattr(request, name, value)
    return call(cluster, request, 2)


def partition_errors(answer: Any) -> list[tuple[int, str | None]]:
    return [(p.error_code, p.error_message) for t in answer.responses for p in t.partitions]


def test_a_renew_extends_the_lock_from_now_and_keeps_the_delivery_count():
    clock, cluster = m1_holding_the_first_batch()
    clock.advance(10_000)
    answer = acknowledge_v2(cluster, "m1", 1, [(0, 1, [RENEW])])
    assert (answer.error_code, answer.acquisition_lock_timeout_ms, partition_errors(answer)) == (0, 30_000, [(0, None)])
    clock.advance(29_999)  # past the first lock (30 s from the acquisition), not the renewed one
    cluster.tick()
    assert acquired(fetch(cluster, "m2", 1)) == []
    clock.advance(1)
    cluster.tick()
    assert acquired(fetch(cluster, "m2", 2)) == [(0, 1, 2)]  # delivered twice: the renewal was no delivery


def test_a_renew_share_fetch_asking_for_records_is_invalid_request_and_keeps_the_epoch():
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    produce(cluster, 2)
    assert acquired(fetch(cluster, "m1", 0, version=2)) == [(0, 1, 1)]
    for field in ("max_records", "min_bytes", "max_bytes", "max_wait_ms"):
        answer = renew_fetch(cluster, "m1", 1, [(0, 1, [RENEW])], **{field: 1})
        assert (answer.error_code, answer.error_message, answer.acquisition_lock_timeout_ms, answer.responses) == (
            ErrorCode.INVALID_REQUEST, None, 0, [])
    assert renew_fetch(cluster, "m1", 1, [(0, 1, [RENEW])]).error_code == 0  # epoch 1 was not used up


def test_a_renew_share_fetch_acknowledges_and_acquires_nothing():
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    produce(cluster, 2)
    assert acquired(fetch(cluster, "m1", 0, max_records=1, version=2)) == [(0, 1, 1)]
    produce(cluster, 2)  # available, but a renewal does not fetch
    answer = renew_fetch(cluster, "m1", 1, [(0, 1, [RENEW])])
    part = answer.responses[0].partitions[0]
    assert (answer.error_code, answer.acquisition_lock_timeout_ms, part.acknowledge_error_code, part.records,
            part.acquired_records) == (0, 30_000, 0, b"", [])
    assert renew_fetch(cluster, "m1", 2, []).responses == []  # nothing acknowledged: no partition answered
    assert acquired(fetch(cluster, "m1", 3, version=2)) == [(2, 3, 1)]


def test_a_renew_needs_v2_and_is_renew_ack():
    clock = ManualClock()
    cluster = plain_cluster(clock)
    heartbeat(cluster, "m1", 0)
    produce(cluster, 2)
    assert acquired(fetch(cluster, "m1", 0, max_records=1, version=2)) == [(0, 1, 1)]
    clock.advance(20_000)
    without_flag = acknowledge_v2(cluster, "m1", 1, [(0, 0, [ACCEPT]), (1, 1, [RENEW])], renew=False)
    assert (without_flag.error_code, partition_errors(without_flag)) == (0, [(ErrorCode.INVALID_REQUEST, None)])
    v1 = acknowledge_v2(cluster, "m1", 2, [(0, 1, [RENEW])], version=1)
    assert partition_errors(v1) == [(ErrorCode.INVALID_REQUEST, None)]
    produce(cluster, 1)
    fetched = fetch(cluster, "m1", 3, acks=[(0, 1, [RENEW])], version=2)  # a share fetch without the flag
    assert fetched.responses[0].partitions[0].acknowledge_error_code == ErrorCode.INVALID_REQUEST
    assert acquired(fetched) == [(2, 2, 1)]  # the fetch itself goes on
    clock.advance(10_000)  # the first lock runs out: nothing was renewed, not even the batch before the renewal
    cluster.tick()
    assert acquired(fetch(cluster, "m1", 4, version=2)) == [(0, 1, 2)]



def test_share_answers_leave_the_current_leader_at_its_default_as_kafka():
    # Kafka 4.3.1 fills CurrentLeader only for NOT_LEADER_OR_FOLLOWER: otherwise LeaderIdAndEpoch's defaults (0, 0),
    # whatever node leads the partition (differential scenario share_renew_ack)
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    produce(cluster, 1)
    fetched = fetch(cluster, "m1", 0, version=2)
    acked = acknowledge_v2(cluster, "m1", 1, [(0, 0, [ACCEPT])], renew=False)
    refused = acknowledge_v2(cluster, "m1", 2, [(0, 0, [ACCEPT])], renew=False)
    assert [(p.current_leader.leader_id, p.current_leader.leader_epoch)
            for answer in (fetched, acked, refused) for t in answer.responses for p in t.partitions] == [(0, 0)] * 3


def test_a_renew_is_refused_when_the_group_turns_renewals_off():
    cluster = plain_cluster()
    set_group_config(cluster, "share.renew.acknowledge.enable", "false")
    heartbeat(cluster, "m1", 0)
    produce(cluster, 2)
    assert acquired(fetch(cluster, "m1", 0, version=2)) == [(0, 1, 1)]
    refused = acknowledge_v2(cluster, "m1", 1, [(0, 1, [RENEW])])
    assert (refused.error_code, partition_errors(refused)) == (0, [(
        ErrorCode.INVALID_RECORD_STATE, "Renewing acquisition locks is not enabled for the group.")])
    part = renew_fetch(cluster, "m1", 2, [(0, 1, [RENEW])]).responses[0].partitions[0]
    assert (part.acknowledge_error_code, part.acknowledge_error_message) == (
        ErrorCode.INVALID_RECORD_STATE, "Renewing acquisition locks is not enabled for the group.")
    assert partition_errors(acknowledge_v2(cluster, "m1", 3, [(0, 1, [ACCEPT])], renew=False)) == [(0, None)]


# Refused acknowledgements: Kafka's SharePartition keeps a batch acquired whole as one in-flight batch and answers for
# it as a batch until an acknowledgement of part of it splits it per offset; read from Kafka 4.3.1 (differential
# scenario share_ack_refusals)
GAP = 0
FIRST_PAST = "Batch record not found. The first offset in request is past acquired records."
LAST_PAST = "Batch record not found. The last offset in request is past acquired records."
NOT_BATCH_OWNER = "Member is not the owner of batch record"
NOT_OFFSET_OWNER = "Member is not the owner of offset"
BATCH_NOT_ACQUIRED = "The batch cannot be acknowledged. The batch is not in the acquired state."
OFFSET_NOT_ACQUIRED = "The offset cannot be acknowledged. The offset is not acquired."


def two_members_holding_a_batch_each() -> Cluster:
    """m1 holds batch 0-1, m2 batch 2-3, each acquired whole; m1's next session epoch is 1, m2's too."""
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    heartbeat(cluster, "m2", 0)
    produce(cluster, 2)
    produce(cluster, 2)
    assert acquired(fetch(cluster, "m1", 0, max_records=1, version=2)) == [(0, 1, 1)]
    assert acquired(fetch(cluster, "m2", 0, max_records=1, version=2)) == [(2, 3, 1)]
    return cluster


def refusal(cluster: Cluster, member: str, epoch: int, acks: list[tuple[int, int, list[int]]],
            version: int = 2) -> tuple[int, str | None]:
    [error] = partition_errors(acknowledge_v2(cluster, member, epoch, acks, renew=False, version=version))
    return error


def test_acknowledging_past_the_acquired_records_is_invalid_request_with_kafkas_texts():
    cluster = two_members_holding_a_batch_each()
    assert refusal(cluster, "m1", 1, [(6, 6, [ACCEPT])]) == (ErrorCode.INVALID_REQUEST, FIRST_PAST)
    assert refusal(cluster, "m1", 2, [(2, 6, [ACCEPT])]) == (ErrorCode.INVALID_REQUEST, LAST_PAST)
    assert refusal(cluster, "m1", 3, [(1, 0, [ACCEPT])]) == (ErrorCode.INVALID_REQUEST, None)
    assert refusal(cluster, "m1", 4, [(5, 4, [ACCEPT])], version=1) == (ErrorCode.INVALID_REQUEST, None)


def test_a_batch_acquired_whole_by_another_member_is_refused_as_a_batch_until_split():
    cluster = two_members_holding_a_batch_each()
    assert refusal(cluster, "m1", 1, [(2, 3, [ACCEPT])]) == (ErrorCode.INVALID_RECORD_STATE, NOT_BATCH_OWNER)
    assert refusal(cluster, "m1", 2, [(2, 3, [ACCEPT])], version=1) == (ErrorCode.INVALID_RECORD_STATE,
                                                                         NOT_BATCH_OWNER)
    part = fetch(cluster, "m1", 3, acks=[(2, 3, [ACCEPT])], version=2).responses[0].partitions[0]
    assert (part.error_code, part.acknowledge_error_code, part.acknowledge_error_message) == (
        0, ErrorCode.INVALID_RECORD_STATE, NOT_BATCH_OWNER)
    assert refusal(cluster, "m1", 4, [(0, 0, [ACCEPT])]) == (0, None)  # part of m1's batch: splits it
    # crossing into m2's batch, or inside it: still refused as m2's whole batch
    assert refusal(cluster, "m1", 5, [(1, 2, [ACCEPT])]) == (ErrorCode.INVALID_RECORD_STATE, NOT_BATCH_OWNER)
    assert refusal(cluster, "m1", 6, [(3, 3, [ACCEPT])]) == (ErrorCode.INVALID_RECORD_STATE, NOT_BATCH_OWNER)
    assert refusal(cluster, "m2", 1, [(3, 3, [ACCEPT])]) == (0, None)  # m2's batch split per offset
    assert refusal(cluster, "m1", 7, [(2, 2, [ACCEPT])]) == (ErrorCode.INVALID_RECORD_STATE, NOT_OFFSET_OWNER)
    assert refusal(cluster, "m2", 2, [(3, 3, [ACCEPT])]) == (ErrorCode.INVALID_RECORD_STATE, OFFSET_NOT_ACQUIRED)
    assert refusal(cluster, "m1", 8, [(3, 3, [ACCEPT])]) == (ErrorCode.INVALID_RECORD_STATE, OFFSET_NOT_ACQUIRED)
    assert refusal(cluster, "m2", 3, [(3, 3, [GAP])]) == (ErrorCode.INVALID_RECORD_STATE, OFFSET_NOT_ACQUIRED)
    assert refusal(cluster, "m2", 4, [(2, 2, [GAP])]) == (0, None)  # a gap archives an acquired offset
    assert refusal(cluster, "m2", 5, [(2, 2, [REJECT])]) == (ErrorCode.INVALID_RECORD_STATE, OFFSET_NOT_ACQUIRED)


def test_a_batch_no_longer_acquired_is_refused_as_a_batch():
    cluster = two_members_holding_a_batch_each()
    assert refusal(cluster, "m2", 1, [(2, 3, [ACCEPT])]) == (0, None)  # whole: stays one batch
    assert refusal(cluster, "m2", 2, [(2, 3, [ACCEPT])]) == (ErrorCode.INVALID_RECORD_STATE, BATCH_NOT_ACQUIRED)
    assert refusal(cluster, "m1", 1, [(2, 3, [ACCEPT])]) == (ErrorCode.INVALID_RECORD_STATE, BATCH_NOT_ACQUIRED)
    assert refusal(cluster, "m2", 3, [(3, 3, [ACCEPT])]) == (ErrorCode.INVALID_RECORD_STATE, BATCH_NOT_ACQUIRED)
    assert refusal(cluster, "m2", 4, [(2, 3, [GAP])]) == (ErrorCode.INVALID_RECORD_STATE, BATCH_NOT_ACQUIRED)


def test_offsets_released_or_archived_are_refused_per_offset():
    cluster = plain_cluster()
    heartbeat(cluster, "m1", 0)
    produce(cluster, 3)
    assert acquired(fetch(cluster, "m1", 0, max_records=1, version=2)) == [(0, 2, 1)]
    assert refusal(cluster, "m1", 1, [(1, 1, [RELEASE])]) == (0, None)
    assert refusal(cluster, "m1", 2, [(1, 1, [ACCEPT])]) == (ErrorCode.INVALID_RECORD_STATE, OFFSET_NOT_ACQUIRED)
    assert refusal(cluster, "m1", 3, [(0, 2, [REJECT])]) == (ErrorCode.INVALID_RECORD_STATE, OFFSET_NOT_ACQUIRED)
    assert refusal(cluster, "m1", 4, [(0, 2, [REJECT, GAP, REJECT])]) == (ErrorCode.INVALID_RECORD_STATE,
                                                                          OFFSET_NOT_ACQUIRED)
    assert refusal(cluster, "m1", 5, [(0, 0, [REJECT]), (2, 2, [REJECT])]) == (0, None)
    assert refusal(cluster, "m1", 6, [(2, 2, [ACCEPT])]) == (ErrorCode.INVALID_RECORD_STATE, OFFSET_NOT_ACQUIRED)
    part = fetch(cluster, "m1", 7, acks=[(2, 2, [ACCEPT])], max_records=1).responses[0].partitions[0]
    assert (part.acknowledge_error_code, part.acknowledge_error_message) == (ErrorCode.INVALID_RECORD_STATE,
                                                                             OFFSET_NOT_ACQUIRED)
    assert acquired(fetch(cluster, "m1", 8)) == [] and [(r.first_offset, r.last_offset, r.delivery_count)
                                                        for r in part.acquired_records] == [(1, 1, 2)]
