"""Every API at every version it serves answers a real request: no stub is ever advertised."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from minibroker.apis import API_MODULES
from minibroker.protocol import records
from minibroker.protocol.messages import (
    AlterConfigsRequest,
    ApiVersionsRequest,
    CreatePartitionsRequest,
    CreateTopicsRequest,
    DeleteRecordsRequest,
    DeleteTopicsRequest,
    DescribeClusterRequest,
    DescribeConfigsRequest,
    DescribeProducersRequest,
    DescribeTopicPartitionsRequest,
    FetchRequest,
    IncrementalAlterConfigsRequest,
    InitProducerIdRequest,
    ListOffsetsRequest,
    MetadataRequest,
    OffsetForLeaderEpochRequest,
    ProduceRequest,
)
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic


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
        index=0, records=records.build_batch([(b"k", b"v")], timestamp=1_700_000_000_000))])
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


def delete_topics(env: Env, v: int) -> Any:
    if v >= 6:
        return DeleteTopicsRequest(topics=[DeleteTopicsRequest.DeleteTopicState(name=None, topic_id=uuid.uuid4())],
                                   timeout_ms=1000)
    return DeleteTopicsRequest(topic_names=["does-not-exist"], timeout_ms=1000)


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
    75: (lambda env, v: DescribeTopicPartitionsRequest(topics=[DescribeTopicPartitionsRequest.TopicRequest(
        name=env.topic)], response_partition_limit=1),
        lambda r: [t.error_code for t in r.topics] + [int(r.next_cursor is None)]),
}

CASES = [(key, version) for key, module in sorted(API_MODULES.items())
         for version in range(module.MIN_VERSION, module.MAX_VERSION + 1)]


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
