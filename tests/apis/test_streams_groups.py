"""StreamsGroupHeartbeat and StreamsGroupDescribe on the wire, with a manual clock: what a Streams client reads.
Answers and messages as Kafka 4.3.1 gave them to the same requests."""

from __future__ import annotations

from typing import Any

from minibroker.apis import advertised_ranges
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    ConsumerGroupHeartbeatRequest,
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    JoinGroupRequest,
    ListGroupsRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    StreamsGroupDescribeRequest,
    StreamsGroupHeartbeatRequest,
)

from .authz import call

H = StreamsGroupHeartbeatRequest
T = H.Topology
TI = T.Subtopology.TopicInfo


def plain_cluster(**configs: Any) -> Cluster:
    cluster = Cluster(BrokerConfig({"node.id": 1, "group.streams.initial.rebalance.delay.ms": 0,
                                    "group.streams.assignment.interval.ms": 0, **configs}, profile="latest"),
                      clock=ManualClock(1_700_000_000_000))
    cluster.create_topic("lines", 2)
    return cluster


def word_count(app: str = "app") -> Any:
    return T(epoch=0, subtopologies=[
        T.Subtopology(subtopology_id="0", source_topics=["lines"], source_topic_regex=[], state_changelog_topics=[],
                      repartition_sink_topics=[f"{app}-words-repartition"], repartition_source_topics=[],
                      copartition_groups=[]),
        T.Subtopology(subtopology_id="1", source_topics=[], source_topic_regex=[],
                      state_changelog_topics=[TI(name=f"{app}-counts-changelog", partitions=0, replication_factor=0,
                                                 topic_configs=[TI.KeyValue(key="cleanup.policy",
                                                                            value="compact")])],
                      repartition_sink_topics=[],
                      repartition_source_topics=[TI(name=f"{app}-words-repartition", partitions=0,
                                                    replication_factor=0, topic_configs=[])],
                      copartition_groups=[])])


def hb(member: str, epoch: int, group: str = "app", **fields: Any) -> Any:
    values: dict[str, Any] = dict(group_id=group, member_id=member, member_epoch=epoch, endpoint_information_epoch=0,
                                  instance_id=None, rack_id=None, rebalance_timeout_ms=-1, topology=None,
                                  active_tasks=None, standby_tasks=None, warmup_tasks=None, process_id=None,
                                  user_endpoint=None, client_tags=None, task_offsets=None, task_end_offsets=None,
                                  shutdown_application=False)
    if epoch == 0:
        values.update(rebalance_timeout_ms=30_000, topology=word_count(group), active_tasks=[], standby_tasks=[],
                      warmup_tasks=[], process_id=f"process-{member}")
    values.update(fields)
    return H(**values)


def tasks(entries: list[Any] | None) -> set[tuple[str, int]]:
    return {(e.subtopology_id, p) for e in entries or [] for p in e.partitions}


def test_streams_apis_are_advertised_at_kafka_4_3s_versions():
    ranges = {key: (low, high) for key, low, high in advertised_ranges()}
    assert ranges[88] == (0, 0) and ranges[89] == (0, 0)


def test_the_first_member_makes_the_broker_create_the_internal_topics_then_gets_every_task():
    cluster = plain_cluster()
    first = call(cluster, hb("m1", 0), 0)
    assert (first.error_code, first.member_epoch, first.heartbeat_interval_ms) == (0, 2, 5000)  # a new group: 2
    assert [(s.status_code, s.status_detail) for s in first.status] == [
        (3, "Internal topics are missing: app-counts-changelog, app-words-repartition")]
    assert tasks(first.active_tasks) == set()
    # created as Kafka's AutoTopicCreationManager creates them: derived partitions, the declared configs
    assert len(cluster.topics["app-words-repartition"].partitions) == 2
    changelog = cluster.topics["app-counts-changelog"]
    assert len(changelog.partitions) == 2
    assert changelog.configs["cleanup.policy"] == ["compact"]
    second = call(cluster, hb("m1", 2), 0)
    assert second.status == []
    assert second.member_epoch == 3
    assert tasks(second.active_tasks) == {("0", 0), ("0", 1), ("1", 0), ("1", 1)}


def test_describe_shows_the_topology_members_and_assignments():
    cluster = plain_cluster()
    call(cluster, hb("m1", 0), 0)
    call(cluster, hb("m1", 2), 0)
    answer = call(cluster, StreamsGroupDescribeRequest(group_ids=["app", "nope"], include_authorized_operations=False),
                  0)
    app, nope = answer.groups
    assert (app.error_code, app.group_state, app.group_epoch, app.assignment_epoch) == (0, "Stable", 3, 3)
    assert [s.subtopology_id for s in app.topology.subtopologies] == ["0", "1"]
    assert app.topology.subtopologies[1].state_changelog_topics[0].name == "app-counts-changelog"
    (member,) = app.members
    assert (member.member_id, member.member_epoch, member.process_id, member.client_host) == (
        "m1", 3, "process-m1", "/127.0.0.1")
    assert tasks(member.assignment.active_tasks) == tasks(member.target_assignment.active_tasks) == {
        ("0", 0), ("0", 1), ("1", 0), ("1", 1)}
    assert (nope.error_code, nope.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found.")


def test_streams_groups_in_the_group_admin_apis():
    cluster = plain_cluster()
    call(cluster, hb("m1", 0), 0)
    listed = call(cluster, ListGroupsRequest(states_filter=[], types_filter=["streams"]), 5)
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in listed.groups] == [
        ("app", "streams", "NotReady", "streams")]  # its internal topics were missing when it joined
    described = call(cluster, DescribeGroupsRequest(groups=["app"], include_authorized_operations=False), 5)
    assert (described.groups[0].error_code, described.groups[0].group_state) == (0, "Dead")
    busy = call(cluster, DeleteGroupsRequest(groups_names=["app"]), 2)
    assert busy.results[0].error_code == ErrorCode.NON_EMPTY_GROUP
    assert call(cluster, hb("m1", -1), 0).member_epoch == -1
    deleted = call(cluster, DeleteGroupsRequest(groups_names=["app"]), 2)
    assert deleted.results[0].error_code == 0
    assert "app" not in cluster.groups.streams.groups


def test_a_member_commits_offsets_at_its_member_epoch():
    cluster = plain_cluster()
    call(cluster, hb("m1", 0), 0)
    epoch = call(cluster, hb("m1", 2), 0).member_epoch

    def commit(at: int, version: int = 9) -> int:
        request = OffsetCommitRequest(group_id="app", generation_id_or_member_epoch=at, member_id="m1",
                                      group_instance_id=None, retention_time_ms=-1, topics=[
                                          OffsetCommitRequest.OffsetCommitRequestTopic(
                                              name="lines", topic_id=cluster.topics["lines"].topic_id, partitions=[
                                                  OffsetCommitRequest.OffsetCommitRequestTopic
                                                  .OffsetCommitRequestPartition(
                                                      partition_index=0, committed_offset=5,
                                                      committed_leader_epoch=-1, committed_metadata="")])])
        return call(cluster, request, version).topics[0].partitions[0].error_code

    assert commit(epoch) == 0
    assert commit(epoch - 1) == ErrorCode.STALE_MEMBER_EPOCH
    assert commit(epoch, version=8) == ErrorCode.UNSUPPORTED_VERSION  # members commit with v9+, as in Kafka 4.3.1

    def delete_offset() -> int:
        request = OffsetDeleteRequest(group_id="app", topics=[OffsetDeleteRequest.OffsetDeleteRequestTopic(
            name="lines", partitions=[OffsetDeleteRequest.OffsetDeleteRequestTopic.OffsetDeleteRequestPartition(
                partition_index=0)])])
        return call(cluster, request, 0).topics[0].partitions[0].error_code

    assert delete_offset() == ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC  # a member reads it
    call(cluster, hb("m1", -1), 0)
    assert delete_offset() == 0


def test_refusals_answer_kafkas_errors():
    cluster = plain_cluster()
    offsets = call(cluster, hb("m1", 0, task_offsets=[]), 0)
    assert (offsets.error_code, offsets.error_message) == (ErrorCode.INVALID_REQUEST,
                                                           "TaskOffsets are not supported yet.")
    unknown = call(cluster, hb("nosuch", 1), 0)
    assert (unknown.error_code, unknown.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                           "Streams group app not found.")
    call(cluster, hb("m1", 0), 0)
    stranger = call(cluster, hb("nosuch", 1), 0)
    assert (stranger.error_code, stranger.error_message) == (ErrorCode.UNKNOWN_MEMBER_ID,
                                                             "Member nosuch is not a member of group app.")


def test_off_unless_the_protocol_is_configured():
    cluster = plain_cluster(**{"group.coordinator.rebalance.protocols": "classic,consumer"})
    assert call(cluster, hb("m1", 0), 0).error_code == ErrorCode.UNSUPPORTED_VERSION
    described = call(cluster, StreamsGroupDescribeRequest(group_ids=["app"], include_authorized_operations=False), 0)
    assert described.groups[0].error_code == ErrorCode.UNSUPPORTED_VERSION


def test_a_group_id_names_one_type_of_group():
    cluster = plain_cluster()
    consumer = ConsumerGroupHeartbeatRequest(group_id="cg", member_id="c1", member_epoch=0, instance_id=None,
                                             rack_id=None, rebalance_timeout_ms=30_000,
                                             subscribed_topic_names=["lines"], subscribed_topic_regex=None,
                                             server_assignor=None, topic_partitions=[])
    assert call(cluster, consumer, 1).error_code == 0
    refused = call(cluster, hb("s1", 0, group="cg"), 0)
    assert (refused.error_code, refused.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                           "Group cg is not a streams group.")
    assert call(cluster, hb("s1", 0), 0).error_code == 0
    consumer.group_id = "app"
    other = call(cluster, consumer, 1)
    assert (other.error_code, other.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND,
                                                       "Group app is not a consumer group.")
    join = JoinGroupRequest(group_id="app", session_timeout_ms=10_000, rebalance_timeout_ms=10_000, member_id="",
                            group_instance_id=None, protocol_type="consumer",
                            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")],
                            reason=None)
    assert call(cluster, join, 9).error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_a_topology_naming_internal_topics_or_invalid_names_is_refused_before_the_coordinator():
    cluster = plain_cluster()
    internal = T(epoch=0, subtopologies=[T.Subtopology(
        subtopology_id="0", source_topics=["__consumer_offsets", "__transaction_state"], source_topic_regex=[],
        state_changelog_topics=[], repartition_sink_topics=[], repartition_source_topics=[], copartition_groups=[])])
    refused = call(cluster, hb("m1", 0, topology=internal), 0)
    assert (refused.error_code, refused.error_message) == (
        ErrorCode.STREAMS_INVALID_TOPOLOGY,
        "Use of Kafka internal topics __consumer_offsets,__transaction_state in a Kafka Streams topology is "
        "prohibited.")
    invalid = T(epoch=0, subtopologies=[T.Subtopology(
        subtopology_id="0", source_topics=["lines"], source_topic_regex=[],
        state_changelog_topics=[TI(name="bad/chg", partitions=0, replication_factor=0, topic_configs=[])],
        repartition_sink_topics=[], repartition_source_topics=[], copartition_groups=[])])
    refused = call(cluster, hb("m1", 0, topology=invalid), 0)
    assert (refused.error_code, refused.error_message) == (ErrorCode.STREAMS_INVALID_TOPOLOGY,
                                                           "Topic names bad/chg are not valid topic names.")
    assert "app" not in cluster.groups.streams.groups


def test_internal_topics_the_broker_cannot_create_are_reported_from_the_next_heartbeat():
    cluster = plain_cluster()
    changelogs = [TI(name="app-bad-changelog", partitions=0, replication_factor=0,
                     topic_configs=[TI.KeyValue(key="cleanup.policy", value="bogus")]),
                  TI(name="app-rf-changelog", partitions=0, replication_factor=3, topic_configs=[])]
    topology = T(epoch=0, subtopologies=[T.Subtopology(
        subtopology_id="0", source_topics=["lines"], source_topic_regex=[], state_changelog_topics=changelogs,
        repartition_sink_topics=[], repartition_source_topics=[], copartition_groups=[])])
    missing = "Internal topics are missing: app-rf-changelog, app-bad-changelog"  # Kafka's HashMap order
    first = call(cluster, hb("m1", 0, topology=topology), 0)
    assert [(s.status_code, s.status_detail) for s in first.status] == [(3, missing)]
    second = call(cluster, hb("m1", first.member_epoch), 0)
    # as Kafka 4.3.1 words it, the failures of the creation after the first heartbeat
    assert [(s.status_code, s.status_detail) for s in second.status] == [(3, (
        f"{missing}; Creation failed: app-rf-changelog (Unable to replicate the partition 3 time(s): The target "
        "replication factor of 3 cannot be reached because only 1 broker(s) are registered or some brokers have all "
        "their log directories cordoned.), app-bad-changelog (Invalid value bogus for configuration cleanup.policy: "
        "String must be one of: compact, delete)."))]


def test_a_lost_answer_is_forgiven_only_with_the_owned_tasks():
    cluster = plain_cluster()
    call(cluster, hb("m1", 0), 0)
    assert call(cluster, hb("m1", 2), 0).member_epoch == 3
    fenced = call(cluster, hb("m1", 2), 0)  # the previous epoch, without its owned tasks
    assert (fenced.error_code, fenced.error_message) == (
        ErrorCode.FENCED_MEMBER_EPOCH,
        "The streams group member has a smaller member epoch (2) than the one known by the group coordinator (3). "
        "The member must abandon all its partitions and rejoin.")
    retried = call(cluster, hb("m1", 2, active_tasks=[H.TaskIds(subtopology_id="0", partitions=[0])],
                                standby_tasks=[], warmup_tasks=[]), 0)
    assert (retried.error_code, retried.member_epoch, retried.active_tasks) == (0, 3, None)


def test_the_broker_creates_internal_topics_only_when_the_member_may_create_them_all():
    from minibroker.core.acls import AclOperation as Op
    from minibroker.core.acls import PatternType
    from minibroker.core.acls import ResourceType as Type

    from .authz import allow, secured_cluster

    cluster = secured_cluster(**{"group.streams.initial.rebalance.delay.ms": 0})
    cluster.create_topic("lines", 2)
    allow(cluster, "User:alice", Op.READ, Type.GROUP, "app")
    allow(cluster, "User:alice", Op.DESCRIBE, Type.TOPIC, "lines")
    allow(cluster, "User:alice", Op.DESCRIBE, Type.TOPIC, "app-", PatternType.PREFIXED)
    allow(cluster, "User:alice", Op.CREATE, Type.TOPIC, "app-counts-changelog")
    missing = "Internal topics are missing: app-counts-changelog, app-words-repartition"
    # CREATE on one of the two: Kafka creates neither and names the other in the status
    first = call(cluster, hb("m1", 0), 0)
    assert first.error_code == 0
    assert [(s.status_code, s.status_detail) for s in first.status] == [
        (3, f"{missing}; Unauthorized to CREATE on topics app-words-repartition.")]
    assert "app-counts-changelog" not in cluster.topics and "app-words-repartition" not in cluster.topics
    # with CREATE on the cluster the next heartbeat creates both
    allow(cluster, "User:alice", Op.CREATE, Type.CLUSTER)
    second = call(cluster, hb("m1", first.member_epoch), 0)
    assert [(s.status_code, s.status_detail) for s in second.status] == [(3, missing)]
    assert len(cluster.topics["app-words-repartition"].partitions) == 2
    assert len(cluster.topics["app-counts-changelog"].partitions) == 2
