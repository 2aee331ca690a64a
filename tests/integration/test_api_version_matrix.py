"""Every API at every version it serves answers a real request: no stub is ever advertised."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from minibroker.apis import API_MODULES, accepted_versions
from minibroker.apis.describe_log_dirs import LOG_DIR
from minibroker.apis.releases import LATEST
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    AlterConfigsRequest,
    AlterPartitionReassignmentsRequest,
    AlterReplicaLogDirsRequest,
    AlterShareGroupOffsetsRequest,
    AlterUserScramCredentialsRequest,
    ApiVersionsRequest,
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
    CreateAclsRequest,
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteAclsRequest,
    DeleteGroupsRequest,
    DeleteRecordsRequest,
    DeleteShareGroupOffsetsRequest,
    DeleteTopicsRequest,
    DescribeAclsRequest,
    DescribeClusterRequest,
    DescribeConfigsRequest,
    DescribeGroupsRequest,
    DescribeLogDirsRequest,
    DescribeProducersRequest,
    DescribeShareGroupOffsetsRequest,
    DescribeTopicPartitionsRequest,
    DescribeTransactionsRequest,
    DescribeUserScramCredentialsRequest,
    ElectLeadersRequest,
    EndTxnRequest,
    FetchRequest,
    FindCoordinatorRequest,
    HeartbeatRequest,
    IncrementalAlterConfigsRequest,
    InitProducerIdRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListConfigResourcesRequest,
    ListGroupsRequest,
    ListOffsetsRequest,
    ListPartitionReassignmentsRequest,
    ListTransactionsRequest,
    MetadataRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    OffsetForLeaderEpochRequest,
    ProduceRequest,
    SaslAuthenticateRequest,
    SaslHandshakeRequest,
    ShareAcknowledgeRequest,
    ShareFetchRequest,
    ShareGroupDescribeRequest,
    ShareGroupHeartbeatRequest,
    StreamsGroupDescribeRequest,
    StreamsGroupHeartbeatRequest,
    SyncGroupRequest,
    TxnOffsetCommitRequest,
    UpdateFeaturesRequest,
)
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic

SHARE_MEMBER = "bWF0cml4LXNoYXJlLW1icg"
# closing a share session the matrix has not opened on this connection's member: Kafka's refusals of it
NO_SHARE_SESSION = {ErrorCode.SHARE_SESSION_NOT_FOUND, ErrorCode.INVALID_SHARE_SESSION_EPOCH}


class Env:
    """A topic that requests can name, by name and by id."""

    def __init__(self, wire: WireClient) -> None:
        self.topic = unique_topic("matrix")
        created = wire.request(CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
            name=self.topic, num_partitions=2, replication_factor=1, assignments=[], configs=[])],
            timeout_ms=1000, validate_only=False), 7)
        self.topic_id = created.topics[0].topic_id


def produce(env: Env, v: int) -> Any:
    data = ProduceRequest.TopicProduceData(partition_data=[ProduceRequest.TopicProduceData.PartitionProduceData(
        index=0, records=records.build_batch([(b"k", b"v")], timestamp=int(time.time() * 1000)))])
    if v >= 13:
        data.topic_id = env.topic_id
    else:
        data.name = env.topic
    return ProduceRequest(transactional_id=None, acks=-1, timeout_ms=1000, topic_data=[data])


def fetch(env: Env, v: int) -> Any:
    topic = FetchRequest.FetchTopic(partitions=[FetchRequest.FetchTopic.FetchPartition(
        partition=0, fetch_offset=0, partition_max_bytes=100_000)])
    if v >= 13:
        topic.topic_id = env.topic_id
    else:
        topic.topic = env.topic
    return FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1_000_000, isolation_level=0,
                        topics=[topic], forgotten_topics_data=[], rack_id="")


def alter_configs(env: Env, v: int) -> Any:
    resource = AlterConfigsRequest.AlterConfigsResource(resource_type=2, resource_name=env.topic, configs=[
        AlterConfigsRequest.AlterConfigsResource.AlterableConfig(name="retention.ms", value="1000000")])
    return AlterConfigsRequest(resources=[resource], validate_only=True)


def incremental_alter_configs(env: Env, v: int) -> Any:
    resource = IncrementalAlterConfigsRequest.AlterConfigsResource(resource_type=2, resource_name=env.topic, configs=[
        IncrementalAlterConfigsRequest.AlterConfigsResource.AlterableConfig(
            name="retention.ms", config_operation=0, value="1000000")])
    return IncrementalAlterConfigsRequest(resources=[resource], validate_only=True)


#: An id no topic has, the same every run: test_fuzz_frames mutates these requests with a fixed seed.
UNKNOWN_TOPIC_ID = uuid.UUID("9d4c1b2a-5e6f-4a7b-8c9d-0e1f2a3b4c5d")


def delete_topics(env: Env, v: int) -> Any:
    if v >= 6:
        return DeleteTopicsRequest(topics=[DeleteTopicsRequest.DeleteTopicState(name=None, topic_id=UNKNOWN_TOPIC_ID)],
                                   timeout_ms=1000)
    return DeleteTopicsRequest(topic_names=["does-not-exist"], timeout_ms=1000)


def offset_commit(env: Env, v: int) -> Any:
    topic = OffsetCommitRequest.OffsetCommitRequestTopic(partitions=[
        OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
            partition_index=0, committed_offset=1, committed_metadata="")])
    if v >= 10:
        topic.topic_id = env.topic_id
    else:
        topic.name = env.topic
    return OffsetCommitRequest(group_id="matrix-group", generation_id_or_member_epoch=-1, member_id="",
                               topics=[topic])


def offset_fetch(env: Env, v: int) -> Any:
    if v >= 8:
        return OffsetFetchRequest(groups=[OffsetFetchRequest.OffsetFetchRequestGroup(
            group_id="matrix-group", topics=None)])
    return OffsetFetchRequest(group_id="matrix-group", topics=[OffsetFetchRequest.OffsetFetchRequestTopic(
        name=env.topic, partition_indexes=[0])])


def offset_fetch_errors(response: Any) -> list[int]:
    if response.groups:
        return [g.error_code for g in response.groups]
    return [response.error_code] + [p.error_code for t in response.topics for p in t.partitions]


MEMBERLESS = {ErrorCode.UNKNOWN_MEMBER_ID}
UNKNOWN_TXN = {ErrorCode.INVALID_PRODUCER_ID_MAPPING}


def add_partitions_to_txn(env: Env, v: int) -> Any:
    topic = AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=env.topic, partitions=[0])
    if v >= 4:
        return AddPartitionsToTxnRequest(transactions=[AddPartitionsToTxnRequest.AddPartitionsToTxnTransaction(
            transactional_id="matrix-txn", producer_id=1, producer_epoch=0, verify_only=True, topics=[topic])])
    return AddPartitionsToTxnRequest(v3_and_below_transactional_id="matrix-txn", v3_and_below_producer_id=1,
                                     v3_and_below_producer_epoch=0, v3_and_below_topics=[topic])


def add_partitions_errors(response: Any) -> list[int]:
    topics = response.results_by_topic_v3_and_below or [
        t for r in response.results_by_transaction for t in r.topic_results]
    return [0 if p.partition_error_code in UNKNOWN_TXN else p.partition_error_code
            for t in topics for p in t.results_by_partition]

# ResourceType, PatternType, AclOperation and AclPermissionType codes
ANY, TOPIC, LITERAL, READ, ALLOW = 1, 2, 3, 3, 3
# with no authorizer every ACL API answers SECURITY_DISABLED; on a PLAINTEXT listener SASL is ILLEGAL_SASL_STATE
NO_AUTHORIZER = {ErrorCode.SECURITY_DISABLED}
NOT_SASL = {ErrorCode.ILLEGAL_SASL_STATE}


def create_acls(env: Env, v: int) -> Any:
    return CreateAclsRequest(creations=[CreateAclsRequest.AclCreation(
        resource_type=TOPIC, resource_name=env.topic, resource_pattern_type=LITERAL, principal="User:matrix",
        host="*", operation=READ, permission_type=ALLOW)])


def delete_acls(env: Env, v: int) -> Any:
    return DeleteAclsRequest(filters=[DeleteAclsRequest.DeleteAclsFilter(
        resource_type_filter=ANY, resource_name_filter=None, pattern_type_filter=ANY, principal_filter=None,
        host_filter=None, operation=ANY, permission_type=ANY)])


def describe_log_dirs_errors(response: Any) -> list[int]:
    """The top-level error (v3+; 0 before), each log dir's, and 1 unless both partitions are described."""
    partitions = [p.partition_index for r in response.results for t in r.topics for p in t.partitions]
    return [response.error_code] + [r.error_code for r in response.results] + [int(sorted(partitions) != [0, 1])]


BUILDERS: dict[int, tuple[Callable[[Env, int], Any], Callable[[Any], list[int]]]] = {
    0: (produce, lambda r: [p.error_code for t in r.responses for p in t.partition_responses]),
    1: (fetch, lambda r: [p.error_code for t in r.responses for p in t.partitions]),
    2: (lambda env, v: ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[
        ListOffsetsRequest.ListOffsetsTopic(name=env.topic, partitions=[
            ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=-1)])],
        timeout_ms=1000),
        lambda r: [p.error_code for t in r.topics for p in t.partitions]),
    3: (lambda env, v: MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=env.topic)],
                                       allow_auto_topic_creation=False),
        lambda r: [t.error_code for t in r.topics]),
    18: (lambda env, v: ApiVersionsRequest(client_software_name="matrix", client_software_version="1"),
         lambda r: [r.error_code]),
    19: (lambda env, v: CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
        name=unique_topic("m"), num_partitions=1, replication_factor=1, assignments=[], configs=[])],
        timeout_ms=1000, validate_only=True), lambda r: [t.error_code for t in r.topics]),
    20: (delete_topics, lambda r: [0 if t.error_code in (3, 100) else t.error_code for t in r.responses]),
    21: (lambda env, v: DeleteRecordsRequest(topics=[DeleteRecordsRequest.DeleteRecordsTopic(
        name=env.topic, partitions=[DeleteRecordsRequest.DeleteRecordsTopic.DeleteRecordsPartition(
            partition_index=1, offset=0)])], timeout_ms=1000),
        lambda r: [p.error_code for t in r.topics for p in t.partitions]),
    22: (lambda env, v: InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=1000),
         lambda r: [r.error_code]),
    23: (lambda env, v: OffsetForLeaderEpochRequest(topics=[OffsetForLeaderEpochRequest.OffsetForLeaderTopic(
        topic=env.topic, partitions=[OffsetForLeaderEpochRequest.OffsetForLeaderTopic.OffsetForLeaderPartition(
            partition=0, leader_epoch=0)])]),
        lambda r: [p.error_code for t in r.topics for p in t.partitions]),
    32: (lambda env, v: DescribeConfigsRequest(resources=[DescribeConfigsRequest.DescribeConfigsResource(
        resource_type=2, resource_name=env.topic, configuration_keys=None)]),
        lambda r: [x.error_code for x in r.results] + [int(not r.results[0].configs)]),
    33: (alter_configs, lambda r: [x.error_code for x in r.responses]),
    37: (lambda env, v: CreatePartitionsRequest(topics=[CreatePartitionsRequest.CreatePartitionsTopic(
        name=env.topic, count=3, assignments=None)], timeout_ms=1000, validate_only=True),
        lambda r: [x.error_code for x in r.results]),
    44: (incremental_alter_configs, lambda r: [x.error_code for x in r.responses]),
    60: (lambda env, v: DescribeClusterRequest(include_cluster_authorized_operations=False),
         lambda r: [r.error_code, int(not r.brokers)]),
    61: (lambda env, v: DescribeProducersRequest(topics=[DescribeProducersRequest.TopicRequest(
        name=env.topic, partition_indexes=[0])]),
        lambda r: [p.error_code for t in r.topics for p in t.partitions]),
    8: (offset_commit, lambda r: [p.error_code for t in r.topics for p in t.partitions]),
    9: (offset_fetch, offset_fetch_errors),
    10: (lambda env, v: FindCoordinatorRequest(key="g", key_type=0, coordinator_keys=["g"]),
         lambda r: [c.error_code for c in r.coordinators] if r.coordinators else [r.error_code]),
    11: (lambda env, v: JoinGroupRequest(group_id=f"matrix-join-{v}", session_timeout_ms=10000,
                                         rebalance_timeout_ms=10000, member_id="", protocol_type="consumer",
                                         protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range",
                                                                                              metadata=b"")]),
         lambda r: [0 if r.error_code == ErrorCode.MEMBER_ID_REQUIRED and r.member_id else r.error_code]),
    12: (lambda env, v: HeartbeatRequest(group_id="none", generation_id=1, member_id="m"),
         lambda r: [0 if r.error_code in MEMBERLESS else r.error_code]),
    13: (lambda env, v: LeaveGroupRequest(group_id="none", member_id="m", members=[
        LeaveGroupRequest.MemberIdentity(member_id="m")]),
        lambda r: [0 if r.error_code in MEMBERLESS else r.error_code]),
    14: (lambda env, v: SyncGroupRequest(group_id="none", generation_id=1, member_id="m", protocol_type="consumer",
                                         protocol_name="range", assignments=[]),
         lambda r: [0 if r.error_code in MEMBERLESS else r.error_code]),
    15: (lambda env, v: DescribeGroupsRequest(groups=["matrix-group"]), lambda r: [g.error_code for g in r.groups]),
    16: (lambda env, v: ListGroupsRequest(), lambda r: [r.error_code, int(not r.groups)]),
    42: (lambda env, v: DeleteGroupsRequest(groups_names=["never-created"]),
         lambda r: [0 if g.error_code == ErrorCode.GROUP_ID_NOT_FOUND else g.error_code for g in r.results]),
    47: (lambda env, v: OffsetDeleteRequest(group_id="matrix-group", topics=[
        OffsetDeleteRequest.OffsetDeleteRequestTopic(name=env.topic, partitions=[
            OffsetDeleteRequest.OffsetDeleteRequestTopic.OffsetDeleteRequestPartition(partition_index=0)])]),
        lambda r: [r.error_code] + [p.error_code for t in r.topics for p in t.partitions]),
    24: (add_partitions_to_txn, add_partitions_errors),
    25: (lambda env, v: AddOffsetsToTxnRequest(transactional_id="matrix-txn", producer_id=1, producer_epoch=0,
                                               group_id="g"),
         lambda r: [0 if r.error_code in UNKNOWN_TXN else r.error_code]),
    26: (lambda env, v: EndTxnRequest(transactional_id="matrix-txn", producer_id=1, producer_epoch=0,
                                      committed=True),
         lambda r: [0 if r.error_code in UNKNOWN_TXN else r.error_code]),
    28: (lambda env, v: TxnOffsetCommitRequest(transactional_id="matrix-txn", group_id="g", producer_id=1,
                                               producer_epoch=0, topics=[]),
         lambda r: [len(r.topics)]),
    68: (lambda env, v: ConsumerGroupHeartbeatRequest(
        group_id="matrix-cg", member_id="matrix-member", member_epoch=0, instance_id=None, rack_id=None,
        rebalance_timeout_ms=30_000, subscribed_topic_names=[env.topic], subscribed_topic_regex=None,
        server_assignor=None, topic_partitions=[]), lambda r: [r.error_code]),
    69: (lambda env, v: ConsumerGroupDescribeRequest(group_ids=["matrix-cg"], include_authorized_operations=False),
         lambda r: [g.error_code for g in r.groups]),
    65: (lambda env, v: DescribeTransactionsRequest(transactional_ids=["matrix-none"]),
         lambda r: [0 if s.error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND else s.error_code
                    for s in r.transaction_states]),
    66: (lambda env, v: ListTransactionsRequest(state_filters=[], producer_id_filters=[]),
         lambda r: [r.error_code]),
    75: (lambda env, v: DescribeTopicPartitionsRequest(topics=[DescribeTopicPartitionsRequest.TopicRequest(
        name=env.topic)], response_partition_limit=1),
        lambda r: [t.error_code for t in r.topics] + [int(r.next_cursor is None)]),
    # one node: the only replica is already the preferred leader
    43: (lambda env, v: ElectLeadersRequest(election_type=0, topic_partitions=[
        ElectLeadersRequest.TopicPartitions(topic=env.topic, partitions=[0])], timeout_ms=1000),
        lambda r: [0 if p.error_code == ErrorCode.ELECTION_NOT_NEEDED else p.error_code
                   for t in r.replica_election_results for p in t.partition_result]),
    45: (lambda env, v: AlterPartitionReassignmentsRequest(timeout_ms=1000, allow_replication_factor_change=True,
        topics=[AlterPartitionReassignmentsRequest.ReassignableTopic(name=env.topic, partitions=[
            AlterPartitionReassignmentsRequest.ReassignableTopic.ReassignablePartition(partition_index=0,
                                                                                      replicas=[0])])]),
        lambda r: [r.error_code] + [p.error_code for t in r.responses for p in t.partitions]),
    46: (lambda env, v: ListPartitionReassignmentsRequest(timeout_ms=1000, topics=None),
         lambda r: [r.error_code]),
    # a replica moved to the log dir it is in already (Kafka 4.3.1 answers NONE)
    34: (lambda env, v: AlterReplicaLogDirsRequest(dirs=[AlterReplicaLogDirsRequest.AlterReplicaLogDir(
        path=LOG_DIR, topics=[AlterReplicaLogDirsRequest.AlterReplicaLogDir.AlterReplicaLogDirTopic(
            name=env.topic, partitions=[0])])]),
        lambda r: [p.error_code for t in r.results for p in t.partitions]),
    74: (lambda env, v: ListConfigResourcesRequest(resource_types=[]), lambda r: [r.error_code]),
    # share groups: a member joins; a share session is opened by a fetch (epoch 0) and closed by an acknowledgement
    # (epoch -1) of the same member, each answered without error at every version
    76: (lambda env, v: ShareGroupHeartbeatRequest(group_id="matrix-sg", member_id=SHARE_MEMBER, member_epoch=0,
                                                   rack_id=None, subscribed_topic_names=[env.topic]),
         lambda r: [r.error_code]),
    77: (lambda env, v: ShareGroupDescribeRequest(group_ids=["matrix-sg"], include_authorized_operations=False),
         lambda r: [0 if g.error_code == ErrorCode.GROUP_ID_NOT_FOUND else g.error_code for g in r.groups]),
    78: (lambda env, v: ShareFetchRequest(
        group_id="matrix-sg", member_id=SHARE_MEMBER, share_session_epoch=0, max_wait_ms=0, min_bytes=1,
        max_bytes=1 << 20, max_records=10, batch_size=10, forgotten_topics_data=[],
        topics=[ShareFetchRequest.FetchTopic(topic_id=env.topic_id, partitions=[
            ShareFetchRequest.FetchTopic.FetchPartition(partition_index=0, acknowledgement_batches=[])])],
        **({"share_acquire_mode": 0, "is_renew_ack": False} if v >= 2 else {})),
        lambda r: [r.error_code] + [p.error_code for t in r.responses for p in t.partitions]),
    79: (lambda env, v: ShareAcknowledgeRequest(
        group_id="matrix-sg", member_id=SHARE_MEMBER, share_session_epoch=-1, topics=[],
        **({"is_renew_ack": False} if v >= 2 else {})),
        lambda r: [0 if r.error_code in NO_SHARE_SESSION else r.error_code]),
    # share-group offsets: the member's group described (null topics: every share partition); a start offset set
    # and deleted in another, empty group (made by the Alter; Delete before any Alter finds no group)
    90: (lambda env, v: DescribeShareGroupOffsetsRequest(groups=[
        DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup(group_id="matrix-sg", topics=None)]),
        lambda r: [g.error_code for g in r.groups]),
    91: (lambda env, v: AlterShareGroupOffsetsRequest(group_id="matrix-sg-offsets", topics=[
        AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic(topic_name=env.topic, partitions=[
            AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic.AlterShareGroupOffsetsRequestPartition(
                partition_index=0, start_offset=0)])]),
        lambda r: [r.error_code] + [p.error_code for t in r.responses for p in t.partitions]),
    92: (lambda env, v: DeleteShareGroupOffsetsRequest(group_id="matrix-sg-offsets", topics=[
        DeleteShareGroupOffsetsRequest.DeleteShareGroupOffsetsRequestTopic(topic_name=env.topic)]),
        lambda r: [0 if r.error_code == ErrorCode.GROUP_ID_NOT_FOUND else r.error_code]
        + [t.error_code for t in r.responses]),
    # streams groups: a member joins with a one-subtopology topology reading the matrix topic; the group described
    88: (lambda env, v: StreamsGroupHeartbeatRequest(
        group_id="matrix-streams", member_id=SHARE_MEMBER, member_epoch=0, endpoint_information_epoch=0,
        instance_id=None, rack_id=None, rebalance_timeout_ms=30000, active_tasks=[], standby_tasks=[],
        warmup_tasks=[], process_id="matrix-process", user_endpoint=None, client_tags=None, task_offsets=None,
        task_end_offsets=None, shutdown_application=False, topology=StreamsGroupHeartbeatRequest.Topology(
            epoch=0, subtopologies=[StreamsGroupHeartbeatRequest.Topology.Subtopology(
                subtopology_id="0", source_topics=[env.topic], source_topic_regex=[], state_changelog_topics=[],
                repartition_sink_topics=[], repartition_source_topics=[], copartition_groups=[])])),
        lambda r: [r.error_code]),
    89: (lambda env, v: StreamsGroupDescribeRequest(group_ids=["matrix-streams"], include_authorized_operations=False),
         lambda r: [0 if g.error_code == ErrorCode.GROUP_ID_NOT_FOUND else g.error_code for g in r.groups]),
    # no updates: answered without error at every version and changes nothing (v0 has no validate_only)
    57: (lambda env, v: UpdateFeaturesRequest(timeout_ms=60000, feature_updates=[], validate_only=True),
         lambda r: [r.error_code]),
    35: (lambda env, v: DescribeLogDirsRequest(topics=[DescribeLogDirsRequest.DescribableLogDirTopic(
        topic=env.topic, partitions=[0, 1])]),
        describe_log_dirs_errors),
    29: (lambda env, v: DescribeAclsRequest(resource_type_filter=ANY, resource_name_filter=None,
                                            pattern_type_filter=ANY, principal_filter=None, host_filter=None,
                                            operation=ANY, permission_type=ANY),
         lambda r: [0 if r.error_code in NO_AUTHORIZER else r.error_code]),
    30: (create_acls, lambda r: [0 if x.error_code in NO_AUTHORIZER else x.error_code for x in r.results]),
    31: (delete_acls, lambda r: [0 if x.error_code in NO_AUTHORIZER else x.error_code for x in r.filter_results]),
    17: (lambda env, v: SaslHandshakeRequest(mechanism="PLAIN"),
         lambda r: [0 if r.error_code in NOT_SASL else r.error_code]),
    36: (lambda env, v: SaslAuthenticateRequest(auth_bytes=b"\x00matrix\x00secret"),
         lambda r: [0 if r.error_code in NOT_SASL else r.error_code]),
    50: (lambda env, v: DescribeUserScramCredentialsRequest(users=None),
         lambda r: [r.error_code] + [x.error_code for x in r.results]),
    51: (lambda env, v: AlterUserScramCredentialsRequest(deletions=[], upsertions=[
        AlterUserScramCredentialsRequest.ScramCredentialUpsertion(name="matrix", mechanism=1, iterations=4096,
                                                                  salt=b"salt", salted_password=b"x" * 32)]),
         lambda r: [x.error_code for x in r.results]),
}

# every version the broker (a `latest` node: Kafka 4.3's ranges) serves; a module's versions of a later release
# (DeleteGroups v3, Kafka 4.4) are served by nodes speaking as that release
CASES = [(key, version) for key, (low, high) in sorted(accepted_versions(LATEST).items())
         for version in range(low, high + 1)]


def test_every_served_api_has_a_matrix_entry():
    assert set(BUILDERS) == set(API_MODULES)


@pytest.fixture(scope="module")
def env(broker):
    with WireClient(broker.host, broker.port) as wire:
        return Env(wire)


@pytest.mark.parametrize(("api_key", "version"), CASES, ids=[f"api{k}-v{v}" for k, v in CASES])
def test_api_answers_at_every_served_version(broker, env, api_key, version):
    build, errors = BUILDERS[api_key]
    with WireClient(broker.host, broker.port) as wire:
        response = wire.request(build(env, version), version)
    assert errors(response) and set(errors(response)) == {0}, response
