"""CreateTopics and Metadata answered as Apache Kafka 4.3.1 answers them (found by tests/differential).

Topic.validate's wording ("Topic name is invalid: ..."), ReplicationControlManager's
collision check between '.' and '_', the placement refusal's full message, a validate-only topic's id, and
KafkaApis.handleTopicMetadataRequest's lookup by topic id.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import CreateTopicsRequest, MetadataRequest
from tests.apis.authz import call, open_cluster

ZERO_UUID = uuid.UUID(int=0)


def create(*names: str, validate_only: bool = False, replication_factor: int = 1) -> Any:
    return CreateTopicsRequest(topics=[
        CreateTopicsRequest.CreatableTopic(name=name, num_partitions=1, replication_factor=replication_factor,
                                           assignments=[], configs=[]) for name in names], timeout_ms=1000,
        validate_only=validate_only)


@pytest.mark.parametrize(("name", "message"), [
    ("", "Topic name is invalid: the empty string is not allowed"),
    (".", "Topic name is invalid: '.' is not allowed"),
    ("..", "Topic name is invalid: '..' is not allowed"),
    ("a" * 250, f"Topic name is invalid: the length of '{'a' * 250}' is longer than the max allowed length 249"),
    ("a/b", "Topic name is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, "
            "'.', '_' and '-'"),
])
def test_create_topics_refuses_an_illegal_name_with_topic_validate_wording(name: str, message: str) -> None:
    c = open_cluster()
    [result] = call(c, create(name), 7).topics
    assert (result.error_code, result.error_message) == (ErrorCode.INVALID_TOPIC_EXCEPTION, message)
    assert name not in c.topics


def test_create_topics_of_a_name_colliding_with_an_existing_one_is_refused() -> None:
    c = open_cluster("orders_eu")
    [result] = call(c, create("orders.eu"), 7).topics
    assert (result.error_code, result.error_message) == (
        ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic 'orders.eu' collides with existing topic: orders_eu")
    assert "orders.eu" not in c.topics


def test_a_deleted_topic_no_longer_collides() -> None:
    c = open_cluster("orders_eu")
    c.delete_topic("orders_eu")
    [result] = call(c, create("orders.eu"), 7).topics
    assert result.error_code == 0 and "orders.eu" in c.topics


def test_create_topics_beyond_the_brokers_names_cordoned_log_directories() -> None:
    [result] = call(open_cluster(), create("t", replication_factor=2), 7).topics
    assert (result.error_code, result.error_message) == (
        ErrorCode.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 2 time(s): The target replication factor of 2 cannot be reached "
        "because only 1 broker(s) are registered or some brokers have all their log directories cordoned.")


def test_create_topics_validate_only_answers_a_topic_id() -> None:
    c = open_cluster()
    [result] = call(c, create("t", validate_only=True), 7).topics
    assert result.error_code == 0 and result.topic_id not in (None, ZERO_UUID)
    assert "t" not in c.topics


def metadata_by(*entries: tuple[str | None, uuid.UUID], operations: bool = False) -> Any:
    return MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=name, topic_id=topic_id)
                                   for name, topic_id in entries],
                           allow_auto_topic_creation=False, include_topic_authorized_operations=operations)


def test_metadata_by_topic_id_gives_authorized_operations_when_asked() -> None:
    c = open_cluster("t")
    [entry] = call(c, metadata_by((None, c.topics["t"].topic_id), operations=True), 12).topics
    assert entry.name == "t" and entry.authorized_operations == {3, 4, 5, 6, 7, 8, 10, 11}


def test_metadata_with_a_topic_id_ignores_the_names_asked_for() -> None:
    c = open_cluster("t", "u")
    unknown = uuid.UUID("5d0f2a4e-3c1b-4f7a-9e6d-8b2c1a0f9e37")
    topics = call(c, metadata_by((None, unknown), ("u", ZERO_UUID), (None, c.topics["t"].topic_id)), 12).topics
    assert [(t.error_code, t.name, t.topic_id) for t in topics] == [
        (ErrorCode.UNKNOWN_TOPIC_ID, None, unknown), (0, "t", c.topics["t"].topic_id)]
