"""Authorization of the admin APIs, as Kafka's ControllerApis (forwarded ones) and KafkaApis check it.

Each check: an allowed principal succeeds, a refused one gets Kafka's code and changes nothing, and the
super user (User:admin) passes without any ACL.
"""

from __future__ import annotations

import uuid
from typing import Any

from minibroker.core.acls import CLUSTER_NAME
from minibroker.core.cluster import Cluster
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    AlterConfigsRequest,
    AlterPartitionReassignmentsRequest,
    AlterUserScramCredentialsRequest,
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteRecordsRequest,
    DeleteTopicsRequest,
    DescribeConfigsRequest,
    DescribeLogDirsRequest,
    DescribeTopicPartitionsRequest,
    DescribeUserScramCredentialsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
    ListPartitionReassignmentsRequest,
    ProduceRequest,
)
from tests.apis.authz import ADMIN, Op, Type, allow, call, deny, secured_cluster

ALICE = "User:alice"
ZERO_UUID = uuid.UUID(int=0)
TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
SET = 0
SCRAM_SHA_256 = 1
TOPIC_REFUSED = "Topic authorization failed."
CLUSTER_REFUSED = "Cluster authorization failed."
GROUP_REFUSED = "Group authorization failed."


def cluster_with(*topics: str, **configs: Any) -> Cluster:
    c = secured_cluster(**configs)
    for name in topics:
        c.create_topic(name, 1, 1)
    return c


def no_id(topic_id: Any) -> bool:
    return topic_id in (None, ZERO_UUID)


# -- CreateTopics (ControllerApis.createTopics) ------------------------------------------------------------

def create_topics(*names: str) -> Any:
    return CreateTopicsRequest(topics=[
        CreateTopicsRequest.CreatableTopic(name=name, num_partitions=2, replication_factor=1, assignments=[],
                                           configs=[]) for name in names], timeout_ms=1000, validate_only=False)


def test_create_topics_without_create_is_topic_authorization_failed_and_creates_nothing() -> None:
    c = cluster_with()
    deny(c, ALICE, Op.CREATE, Type.TOPIC, "t")
    result = call(c, create_topics("t"), 7).topics[0]
    assert (result.name, result.error_code, result.error_message) == (
        "t", ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
    assert (result.num_partitions, result.replication_factor, result.configs) == (-1, -1, [])
    assert no_id(result.topic_id)
    assert "t" not in c.topics


def test_create_topics_with_create_on_the_cluster_creates_any_topic() -> None:
    c = cluster_with()
    allow(c, ALICE, Op.CREATE, Type.CLUSTER, CLUSTER_NAME)
    results = call(c, create_topics("t1", "t2"), 7).topics
    assert [(r.name, r.error_code) for r in results] == [("t1", 0), ("t2", 0)]
    assert set(c.topics) == {"t1", "t2"}


def test_create_topics_with_create_on_one_topic_creates_only_that_one_and_refuses_the_rest_last() -> None:
    c = cluster_with()
    allow(c, ALICE, Op.CREATE, Type.TOPIC, "ok")
    results = call(c, create_topics("no", "ok", "dup", "dup"), 7).topics
    assert [(r.name, r.error_code) for r in results] == [
        ("ok", 0), ("dup", ErrorCode.INVALID_REQUEST), ("no", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]
    assert set(c.topics) == {"ok"}


def test_create_topics_without_describe_configs_hides_the_created_topics_configs() -> None:
    c = cluster_with()
    allow(c, ALICE, Op.CREATE, Type.TOPIC, "t")
    result = call(c, create_topics("t"), 7).topics[0]
    assert (result.error_code, result.topic_config_error_code) == (0, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    assert (result.num_partitions, result.replication_factor, result.configs) == (-1, -1, [])
    assert result.topic_id == c.topics["t"].topic_id
    assert len(c.topics["t"].partitions) == 2


def test_create_topics_with_describe_configs_answers_the_created_topics_configs() -> None:
    c = cluster_with()
    allow(c, ALICE, Op.CREATE, Type.TOPIC, "t")
    allow(c, ALICE, Op.DESCRIBE_CONFIGS, Type.TOPIC, "t")
    result = call(c, create_topics("t"), 7).topics[0]
    assert (result.error_code, result.topic_config_error_code) == (0, 0)
    assert (result.num_partitions, result.replication_factor) == (2, 1)
    assert any(config.name == "retention.ms" for config in result.configs)


def test_create_topics_as_the_super_user_needs_no_acl() -> None:
    c = cluster_with()
    result = call(c, create_topics("t"), 7, principal=ADMIN).topics[0]
    assert (result.error_code, result.topic_config_error_code, result.num_partitions) == (0, 0, 2)
    assert "t" in c.topics


# -- DeleteTopics (ControllerApis.deleteTopics) -----------------------------------------------------------

def delete_by_name(*names: str) -> Any:
    return DeleteTopicsRequest(topics=[DeleteTopicsRequest.DeleteTopicState(name=name, topic_id=ZERO_UUID)
                                       for name in names], timeout_ms=1000)


def delete_by_id(topic_id: uuid.UUID) -> Any:
    return DeleteTopicsRequest(topics=[DeleteTopicsRequest.DeleteTopicState(name=None, topic_id=topic_id)],
                               timeout_ms=1000)


def test_delete_topics_by_name_without_delete_is_topic_authorization_failed_and_deletes_nothing() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "t")
    result = call(c, delete_by_name("t"), 6).responses[0]
    assert (result.name, result.error_code, result.error_message) == (
        "t", ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_REFUSED)
    assert no_id(result.topic_id)
    assert "t" in c.topics


def test_delete_topics_of_a_missing_topic_is_topic_authorization_failed_without_describe() -> None:
    c = cluster_with()
    result = call(c, delete_by_name("missing"), 6).responses[0]
    assert result.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED


def test_delete_topics_of_a_missing_topic_is_unknown_with_describe() -> None:
    c = cluster_with()
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "missing")
    result = call(c, delete_by_name("missing"), 6).responses[0]
    assert result.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_delete_topics_with_delete_on_the_topic_deletes_it() -> None:
    c = cluster_with("t", "u")
    allow(c, ALICE, Op.DELETE, Type.TOPIC, "t")  # DELETE implies DESCRIBE
    results = call(c, DeleteTopicsRequest(topic_names=["t", "u"], timeout_ms=1000), 5).responses
    assert [(r.name, r.error_code) for r in results] == [("t", 0), ("u", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]
    assert set(c.topics) == {"u"}


def test_delete_topics_with_delete_on_the_cluster_deletes_any_topic() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.DELETE, Type.CLUSTER, CLUSTER_NAME)
    assert call(c, delete_by_name("t"), 6).responses[0].error_code == 0
    assert "t" not in c.topics


def test_delete_topics_by_id_without_describe_hides_the_name() -> None:
    c = cluster_with("t")
    topic_id = c.topics["t"].topic_id
    result = call(c, delete_by_id(topic_id), 6).responses[0]
    assert (result.name, result.topic_id, result.error_code) == (None, topic_id,
                                                                 ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    assert "t" in c.topics


def test_delete_topics_by_id_with_describe_but_not_delete_names_the_topic() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "t")
    topic_id = c.topics["t"].topic_id
    result = call(c, delete_by_id(topic_id), 6).responses[0]
    assert (result.name, result.topic_id, result.error_code) == ("t", topic_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    assert "t" in c.topics


def test_delete_topics_by_id_with_delete_deletes_it() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.DELETE, Type.TOPIC, "t")
    topic_id = c.topics["t"].topic_id
    result = call(c, delete_by_id(topic_id), 6).responses[0]
    assert (result.name, result.topic_id, result.error_code) == ("t", topic_id, 0)
    assert "t" not in c.topics


def test_delete_topics_disabled_by_id_does_not_name_a_topic_the_caller_may_not_describe() -> None:
    c = cluster_with("t", **{"delete.topic.enable": "false"})
    result = call(c, delete_by_id(c.topics["t"].topic_id), 6).responses[0]
    assert (result.name, result.error_code) == (None, ErrorCode.TOPIC_DELETION_DISABLED)


def test_delete_topics_as_the_super_user_needs_no_acl() -> None:
    c = cluster_with("t")
    assert call(c, delete_by_name("t"), 6, principal=ADMIN).responses[0].error_code == 0
    assert "t" not in c.topics


# -- CreatePartitions (ControllerApis.createPartitions) ---------------------------------------------------

def grow(name: str, count: int) -> Any:
    return CreatePartitionsRequest(topics=[CreatePartitionsRequest.CreatePartitionsTopic(
        name=name, count=count, assignments=None)], timeout_ms=1000, validate_only=False)


def test_create_partitions_without_alter_is_topic_authorization_failed_and_adds_none() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "t")
    result = call(c, grow("t", 3), 3).results[0]
    assert (result.name, result.error_code, result.error_message) == ("t", ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                                                      None)
    assert len(c.topics["t"].partitions) == 1


def test_create_partitions_of_a_missing_topic_without_alter_is_topic_authorization_failed() -> None:
    c = cluster_with()
    assert call(c, grow("missing", 3), 3).results[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED


def test_create_partitions_with_alter_on_the_topic_adds_them() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.ALTER, Type.TOPIC, "t")
    assert call(c, grow("t", 3), 3).results[0].error_code == 0
    assert len(c.topics["t"].partitions) == 3


def test_create_partitions_as_the_super_user_needs_no_acl() -> None:
    c = cluster_with("t")
    assert call(c, grow("t", 2), 3, principal=ADMIN).results[0].error_code == 0
    assert len(c.topics["t"].partitions) == 2


# -- DeleteRecords (KafkaApis.handleDeleteRecordsRequest) -------------------------------------------------

def cluster_with_records() -> Cluster:
    """Topic "t" with three records, produced by the super user."""
    c = cluster_with("t")
    batch = records.build_batch([(b"k", b"v")] * 3, timestamp=1_700_000_000_000)
    produced = call(c, ProduceRequest(transactional_id=None, acks=-1, timeout_ms=1000, topic_data=[
        ProduceRequest.TopicProduceData(name="t", partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=batch)])]), 9, principal=ADMIN)
    assert produced.responses[0].partition_responses[0].error_code == 0
    return c


def delete_records(name: str, offset: int) -> Any:
    R = DeleteRecordsRequest.DeleteRecordsTopic
    return DeleteRecordsRequest(topics=[R(name=name, partitions=[R.DeleteRecordsPartition(partition_index=0,
                                                                                         offset=offset)])],
                                timeout_ms=1000)


def test_delete_records_without_delete_is_topic_authorization_failed_and_deletes_nothing() -> None:
    c = cluster_with_records()
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "t")
    partition = call(c, delete_records("t", 2), 2).topics[0].partitions[0]
    assert (partition.error_code, partition.low_watermark) == (ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1)
    assert c.topics["t"].partitions[0].log.log_start_offset == 0


def test_delete_records_of_a_missing_topic_without_delete_is_topic_authorization_failed() -> None:
    c = cluster_with()
    partition = call(c, delete_records("missing", 2), 2).topics[0].partitions[0]
    assert partition.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED


def test_delete_records_with_delete_on_the_topic_moves_the_log_start() -> None:
    c = cluster_with_records()
    allow(c, ALICE, Op.DELETE, Type.TOPIC, "t")
    partition = call(c, delete_records("t", 2), 2).topics[0].partitions[0]
    assert (partition.error_code, partition.low_watermark) == (0, 2)
    assert c.topics["t"].partitions[0].log.log_start_offset == 2


def test_delete_records_as_the_super_user_needs_no_acl() -> None:
    c = cluster_with_records()
    assert call(c, delete_records("t", 1), 2, principal=ADMIN).topics[0].partitions[0].error_code == 0


# -- DescribeConfigs (ConfigHelper.handleDescribeConfigsRequest) ------------------------------------------

def describe_configs(*resources: tuple[int, str]) -> Any:
    R = DescribeConfigsRequest.DescribeConfigsResource
    return DescribeConfigsRequest(resources=[R(resource_type=rtype, resource_name=name, configuration_keys=None)
                                             for rtype, name in resources],
                                  include_synonyms=False, include_documentation=False)


def test_describe_configs_of_a_topic_without_describe_configs_is_topic_authorization_failed() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "t")
    result = call(c, describe_configs((TOPIC, "t")), 4).results[0]
    assert (result.error_code, result.error_message, result.configs) == (
        ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_REFUSED, [])


def test_describe_configs_of_a_missing_topic_without_describe_configs_is_topic_authorization_failed() -> None:
    c = cluster_with()
    assert call(c, describe_configs((TOPIC, "missing")), 4).results[0].error_code == \
        ErrorCode.TOPIC_AUTHORIZATION_FAILED


def test_describe_configs_answers_the_refused_resources_after_the_described_ones() -> None:
    c = cluster_with("no", "ok")
    allow(c, ALICE, Op.ALTER_CONFIGS, Type.TOPIC, "ok")  # ALTER_CONFIGS implies DESCRIBE_CONFIGS
    results = call(c, describe_configs((TOPIC, "no"), (TOPIC, "ok")), 4).results
    assert [(r.resource_name, r.error_code) for r in results] == [
        ("ok", 0), ("no", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]
    assert results[0].configs


def test_describe_configs_of_the_broker_needs_describe_configs_on_the_cluster() -> None:
    c = cluster_with()
    results = call(c, describe_configs((BROKER, "1"), (BROKER_LOGGER, "1")), 4).results
    assert [(r.error_code, r.error_message) for r in results] == [
        (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_REFUSED)] * 2
    allow(c, ALICE, Op.DESCRIBE_CONFIGS, Type.CLUSTER, CLUSTER_NAME)
    results = call(c, describe_configs((BROKER, "1"), (BROKER_LOGGER, "1")), 4).results
    assert [r.error_code for r in results] == [0, 0]
    assert results[0].configs


def test_describe_configs_of_a_group_needs_describe_configs_on_the_group() -> None:
    c = cluster_with()
    result = call(c, describe_configs((GROUP, "g")), 4).results[0]
    assert (result.error_code, result.error_message) == (ErrorCode.GROUP_AUTHORIZATION_FAILED, GROUP_REFUSED)
    allow(c, ALICE, Op.DESCRIBE_CONFIGS, Type.GROUP, "g")
    assert call(c, describe_configs((GROUP, "g")), 4).results[0].error_code != ErrorCode.GROUP_AUTHORIZATION_FAILED


def test_describe_configs_as_the_super_user_needs_no_acl() -> None:
    c = cluster_with("t")
    results = call(c, describe_configs((TOPIC, "t"), (BROKER, "1")), 4, principal=ADMIN).results
    assert [r.error_code for r in results] == [0, 0]


# -- AlterConfigs (ConfigAdminManager.preprocess, then ControllerApis.authorizeAlterResource) -------------

def alter_configs(rtype: int, name: str, **configs: str) -> Any:
    R = AlterConfigsRequest.AlterConfigsResource
    return AlterConfigsRequest(resources=[R(resource_type=rtype, resource_name=name, configs=[
        R.AlterableConfig(name=key.replace("_", "."), value=value) for key, value in configs.items()])],
        validate_only=False)


def test_alter_configs_of_a_topic_without_alter_configs_is_topic_authorization_failed_and_changes_nothing() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.DESCRIBE_CONFIGS, Type.TOPIC, "t")
    result = call(c, alter_configs(TOPIC, "t", retention_ms="1000"), 2).responses[0]
    assert (result.error_code, result.error_message) == (ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_REFUSED)
    assert dict(c.topics["t"].configs) == {}


def test_alter_configs_of_a_topic_with_alter_configs_changes_it() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.ALTER_CONFIGS, Type.TOPIC, "t")
    assert call(c, alter_configs(TOPIC, "t", retention_ms="1000"), 2).responses[0].error_code == 0
    assert dict(c.topics["t"].configs) == {"retention.ms": 1000}


def test_alter_configs_of_the_broker_without_alter_configs_on_the_cluster_changes_nothing() -> None:
    c = cluster_with()
    result = call(c, alter_configs(BROKER, "", log_retention_ms="1000"), 2).responses[0]
    assert (result.error_code, result.error_message) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_REFUSED)
    assert "log.retention.ms" not in c.config.dynamic_default


def test_alter_configs_validates_a_broker_change_before_authorizing_it() -> None:
    c = cluster_with()
    result = call(c, alter_configs(BROKER, "", log_retention_ms="abc"), 2).responses[0]
    assert result.error_code == ErrorCode.INVALID_REQUEST


def test_alter_configs_of_the_broker_with_alter_configs_on_the_cluster_changes_it() -> None:
    c = cluster_with()
    allow(c, ALICE, Op.ALTER_CONFIGS, Type.CLUSTER, CLUSTER_NAME)
    assert call(c, alter_configs(BROKER, "", log_retention_ms="1000"), 2).responses[0].error_code == 0
    assert c.config.dynamic_default["log.retention.ms"] == 1000


def test_alter_configs_refuses_broker_loggers_before_authorizing() -> None:
    c = cluster_with()
    result = call(c, alter_configs(BROKER_LOGGER, "1", root="INFO"), 2).responses[0]
    assert (result.error_code, result.error_message) == (ErrorCode.INVALID_REQUEST, "Unknown resource type 8")


def test_alter_configs_of_a_group_needs_alter_configs_on_the_group() -> None:
    c = cluster_with()
    result = call(c, alter_configs(GROUP, "g", consumer_session_timeout_ms="50000"), 2).responses[0]
    assert (result.error_code, result.error_message) == (ErrorCode.GROUP_AUTHORIZATION_FAILED, GROUP_REFUSED)
    allow(c, ALICE, Op.ALTER_CONFIGS, Type.GROUP, "g")
    result = call(c, alter_configs(GROUP, "g", consumer_session_timeout_ms="50000"), 2).responses[0]
    assert result.error_code != ErrorCode.GROUP_AUTHORIZATION_FAILED


def test_alter_configs_as_the_super_user_needs_no_acl() -> None:
    c = cluster_with("t")
    assert call(c, alter_configs(TOPIC, "t", retention_ms="1000"), 2, principal=ADMIN).responses[0].error_code == 0
    assert dict(c.topics["t"].configs) == {"retention.ms": 1000}


# -- IncrementalAlterConfigs -------------------------------------------------------------------------------

def incremental(rtype: int, name: str, **configs: str) -> Any:
    R = IncrementalAlterConfigsRequest.AlterConfigsResource
    return IncrementalAlterConfigsRequest(resources=[R(resource_type=rtype, resource_name=name, configs=[
        R.AlterableConfig(name=key.replace("_", "."), config_operation=SET, value=value)
        for key, value in configs.items()])], validate_only=False)


def test_incremental_alter_configs_of_a_topic_without_alter_configs_is_topic_authorization_failed() -> None:
    c = cluster_with("t")
    result = call(c, incremental(TOPIC, "t", retention_ms="1000"), 1).responses[0]
    assert (result.error_code, result.error_message) == (ErrorCode.TOPIC_AUTHORIZATION_FAILED, TOPIC_REFUSED)
    assert dict(c.topics["t"].configs) == {}
    allow(c, ALICE, Op.ALTER_CONFIGS, Type.TOPIC, "t")
    assert call(c, incremental(TOPIC, "t", retention_ms="1000"), 1).responses[0].error_code == 0
    assert dict(c.topics["t"].configs) == {"retention.ms": 1000}


def test_incremental_alter_configs_of_the_broker_needs_alter_configs_on_the_cluster() -> None:
    c = cluster_with()
    result = call(c, incremental(BROKER, "1", log_retention_ms="1000"), 1).responses[0]
    assert (result.error_code, result.error_message) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_REFUSED)
    assert c.config.dynamic_layer(1) == {}
    allow(c, ALICE, Op.ALTER_CONFIGS, Type.CLUSTER, CLUSTER_NAME)
    assert call(c, incremental(BROKER, "1", log_retention_ms="1000"), 1).responses[0].error_code == 0
    assert c.config.dynamic_layer(1) == {"log.retention.ms": 1000}


def test_incremental_alter_configs_of_a_broker_logger_without_alter_configs_on_the_cluster_has_no_message() -> None:
    c = cluster_with()
    allow(c, ALICE, Op.DESCRIBE_CONFIGS, Type.CLUSTER, CLUSTER_NAME)
    result = call(c, incremental(BROKER_LOGGER, "1", root="DEBUG"), 1).responses[0]
    assert (result.error_code, result.error_message) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    allow(c, ALICE, Op.ALTER_CONFIGS, Type.CLUSTER, CLUSTER_NAME)
    assert call(c, incremental(BROKER_LOGGER, "1", root="DEBUG"), 1).responses[0].error_code == 0


def test_incremental_alter_configs_as_the_super_user_needs_no_acl() -> None:
    c = cluster_with()
    assert call(c, incremental(BROKER, "", log_retention_ms="1000"), 1,
                principal=ADMIN).responses[0].error_code == 0
    assert c.config.dynamic_default["log.retention.ms"] == 1000


# -- DescribeLogDirs (KafkaApis.handleDescribeLogDirsRequest) ---------------------------------------------

def test_describe_log_dirs_without_describe_on_the_cluster_is_cluster_authorization_failed_from_v3() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "t")
    answer = call(c, DescribeLogDirsRequest(topics=None), 4)
    assert (answer.error_code, answer.results) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [])


def test_describe_log_dirs_without_describe_on_the_cluster_before_v3_is_only_empty() -> None:
    c = cluster_with("t")
    assert call(c, DescribeLogDirsRequest(topics=None), 1).results == []


def test_describe_log_dirs_with_describe_on_the_cluster_lists_the_log_dir() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.DESCRIBE, Type.CLUSTER, CLUSTER_NAME)
    answer = call(c, DescribeLogDirsRequest(topics=None), 4)
    assert answer.error_code == 0
    assert [t.name for t in answer.results[0].topics] == ["t"]
    assert call(c, DescribeLogDirsRequest(topics=None), 4, principal=ADMIN).results[0].topics


# -- AlterPartitionReassignments, ListPartitionReassignments, ElectLeaders (ControllerApis) --------------

def reassign(name: str, replicas: list[int] | None) -> Any:
    R = AlterPartitionReassignmentsRequest.ReassignableTopic
    return AlterPartitionReassignmentsRequest(timeout_ms=1000, allow_replication_factor_change=True, topics=[
        R(name=name, partitions=[R.ReassignablePartition(partition_index=0, replicas=replicas)])])


def test_alter_partition_reassignments_without_alter_on_the_cluster_refuses_every_partition() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.ALTER, Type.TOPIC, "t")
    answer = call(c, reassign("t", [1]), 1)
    assert (answer.error_code, answer.error_message) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    partition = answer.responses[0].partitions[0]
    assert (answer.responses[0].name, partition.partition_index, partition.error_code, partition.error_message) == (
        "t", 0, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)


def test_alter_partition_reassignments_with_alter_on_the_cluster_reaches_the_partitions() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.ALTER, Type.CLUSTER, CLUSTER_NAME)
    answer = call(c, reassign("t", None), 1)
    assert answer.error_code == 0
    assert answer.responses[0].partitions[0].error_code == ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
    assert call(c, reassign("t", [1]), 1, principal=ADMIN).responses[0].partitions[0].error_code == 0


def list_reassignments(topics: Any) -> Any:
    return ListPartitionReassignmentsRequest(timeout_ms=1000, topics=topics)


def test_list_partition_reassignments_without_describe_on_the_cluster_is_cluster_authorization_failed() -> None:
    c = cluster_with("t")
    T = ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics
    answer = call(c, list_reassignments([T(name="t", partition_indexes=[0, 1])]), 0)
    assert (answer.error_code, answer.error_message) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in answer.topics] == [("t", [0, 1])]
    assert call(c, list_reassignments(None), 0).topics == []


def test_list_partition_reassignments_with_describe_on_the_cluster_lists_none() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.ALTER, Type.CLUSTER, CLUSTER_NAME)  # ALTER implies DESCRIBE
    answer = call(c, list_reassignments(None), 0)
    assert (answer.error_code, answer.topics) == (0, [])
    assert call(c, list_reassignments(None), 0, principal=ADMIN).error_code == 0


def elect(topic_partitions: Any) -> Any:
    return ElectLeadersRequest(election_type=0, topic_partitions=topic_partitions, timeout_ms=1000)


def test_elect_leaders_without_alter_on_the_cluster_refuses_every_partition() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.DESCRIBE, Type.CLUSTER, CLUSTER_NAME)
    wanted = [ElectLeadersRequest.TopicPartitions(topic="t", partitions=[0])]
    answer = call(c, elect(wanted), 2)
    assert answer.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    result = answer.replica_election_results[0]
    assert (result.topic, [(p.partition_id, p.error_code, p.error_message) for p in result.partition_result]) == (
        "t", [(0, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)])
    everything = call(c, elect(None), 2)
    assert (everything.error_code, everything.replica_election_results) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [])
    assert call(c, elect(wanted), 0).replica_election_results[0].partition_result[0].error_code == \
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def test_elect_leaders_with_alter_on_the_cluster_reaches_the_partitions() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.ALTER, Type.CLUSTER, CLUSTER_NAME)
    wanted = [ElectLeadersRequest.TopicPartitions(topic="t", partitions=[0])]
    for principal in (ALICE, ADMIN):
        answer = call(c, elect(wanted), 2, principal=principal)
        assert answer.error_code == 0
        assert answer.replica_election_results[0].partition_result[0].error_code == ErrorCode.ELECTION_NOT_NEEDED


# -- SCRAM credentials ------------------------------------------------------------------------------------

def upsert(*users: str) -> Any:
    R = AlterUserScramCredentialsRequest
    return R(deletions=[], upsertions=[R.ScramCredentialUpsertion(name=user, mechanism=SCRAM_SHA_256, iterations=4096,
                                                                  salt=b"salt", salted_password=b"p" * 32)
                                       for user in users])


def test_alter_user_scram_credentials_without_alter_on_the_cluster_refuses_each_user_sorted() -> None:
    c = cluster_with()
    allow(c, ALICE, Op.DESCRIBE, Type.CLUSTER, CLUSTER_NAME)
    results = call(c, upsert("zed", "bob"), 0).results
    assert [(r.user, r.error_code, r.error_message) for r in results] == [
        ("bob", ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None), ("zed", ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)]
    assert c.credentials.scram_users() == {}


def test_alter_user_scram_credentials_with_alter_on_the_cluster_stores_them() -> None:
    c = cluster_with()
    allow(c, ALICE, Op.ALTER, Type.CLUSTER, CLUSTER_NAME)
    assert [r.error_code for r in call(c, upsert("bob"), 0).results] == [0]
    assert [r.error_code for r in call(c, upsert("carol"), 0, principal=ADMIN).results] == [0]
    assert set(c.credentials.scram_users()) == {"bob", "carol"}


def describe_scram(*users: str) -> Any:
    R = DescribeUserScramCredentialsRequest
    return R(users=[R.UserName(name=user) for user in users])


def test_describe_user_scram_credentials_without_describe_on_the_cluster_names_no_user() -> None:
    c = cluster_with()
    call(c, upsert("bob"), 0, principal=ADMIN)
    answer = call(c, describe_scram("bob", "nobody"), 0)
    assert (answer.error_code, answer.error_message) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    assert [(r.user, r.error_code, r.error_message, r.credential_infos) for r in answer.results] == [
        ("", ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None, [])] * 2
    assert call(c, describe_scram(), 0).results == []


def test_describe_user_scram_credentials_with_describe_on_the_cluster_describes_them() -> None:
    c = cluster_with()
    call(c, upsert("bob"), 0, principal=ADMIN)
    allow(c, ALICE, Op.DESCRIBE, Type.CLUSTER, CLUSTER_NAME)
    for principal in (ALICE, ADMIN):
        answer = call(c, describe_scram("bob"), 0, principal=principal)
        assert answer.error_code == 0
        assert [(r.user, r.error_code) for r in answer.results] == [("bob", 0)]


# -- DescribeTopicPartitions (DescribeTopicPartitionsRequestHandler) --------------------------------------

def describe_partitions(*names: str) -> Any:
    R = DescribeTopicPartitionsRequest
    return R(topics=[R.TopicRequest(name=name) for name in names], response_partition_limit=2000, cursor=None)


def test_describe_topic_partitions_of_every_topic_leaves_out_the_ones_the_caller_may_not_describe() -> None:
    c = cluster_with("a", "b", "c")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "b")
    topics = call(c, describe_partitions(), 0).topics
    assert [(t.name, t.error_code) for t in topics] == [("b", 0)]


def test_describe_topic_partitions_by_name_refuses_unauthorized_topics_last_whether_or_not_they_exist() -> None:
    c = cluster_with("a", "b")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "b")
    topics = call(c, describe_partitions("a", "b", "missing"), 0).topics
    assert [(t.name, t.error_code) for t in topics] == [
        ("b", 0), ("a", ErrorCode.TOPIC_AUTHORIZATION_FAILED), ("missing", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]
    refused = topics[1]
    assert no_id(refused.topic_id)
    assert (refused.is_internal, refused.partitions, refused.topic_authorized_operations) == (False, [], -(1 << 31))


def test_describe_topic_partitions_answers_the_operations_the_caller_may_perform() -> None:
    c = cluster_with("t")
    allow(c, ALICE, Op.READ, Type.TOPIC, "t")  # READ implies DESCRIBE
    deny(c, ALICE, Op.WRITE, Type.TOPIC, "t")
    topic = call(c, describe_partitions("t"), 0).topics[0]
    assert (topic.error_code, topic.topic_authorized_operations) == (0, 1 << Op.READ | 1 << Op.DESCRIBE)
    everything = call(c, describe_partitions("t"), 0, principal=ADMIN).topics[0]
    assert everything.topic_authorized_operations == sum(
        1 << op for op in (Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.ALTER, Op.DESCRIBE, Op.DESCRIBE_CONFIGS,
                           Op.ALTER_CONFIGS))
