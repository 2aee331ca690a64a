"""Refusals of the admin APIs that Kafka makes whoever asks, with or without an authorizer.

CreateTopics and DeleteTopics as ControllerApis.createTopics and ControllerApis.deleteTopics answer them
(DeleteTopicsRequest.getErrorResponse when the operation fails as a whole), DescribeConfigs as
ConfigHelper.handleDescribeConfigsRequest and DescribeConfigsRequest.getErrorResponse.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import CreateTopicsRequest, DeleteTopicsRequest, DescribeConfigsRequest
from tests.apis.authz import ADMIN, call, open_cluster, secured_cluster

ZERO_UUID = uuid.UUID(int=0)
TOPIC, BROKER = 2, 4
# Errors.INVALID_REQUEST's default message, which DescribeConfigsRequest.getErrorResponse sends
INVALID_REQUEST_MESSAGE = ("This most likely occurs because of a request being malformed by the client library or "
                           "the message was sent to an incompatible broker. See the broker logs for more details.")


# -- CreateTopics: __cluster_metadata (ControllerApis.createTopics) ----------------------------------------

def create_topics(*names: str, validate_only: bool = False) -> Any:
    return CreateTopicsRequest(topics=[
        CreateTopicsRequest.CreatableTopic(name=name, num_partitions=1, replication_factor=1, assignments=[],
                                           configs=[]) for name in names], timeout_ms=1000,
        validate_only=validate_only)


PROHIBITED = "Creation of internal topic __cluster_metadata is prohibited."


@pytest.mark.parametrize("version", [2, 7])
def test_create_topics_of_cluster_metadata_is_invalid_request_without_an_authorizer(version: int) -> None:
    c = open_cluster()
    results = call(c, create_topics("__cluster_metadata", "t"), version).topics
    # the controller's results first, then the prohibited topic
    assert [(r.name, r.error_code, r.error_message) for r in results] == [
        ("t", 0, None), ("__cluster_metadata", ErrorCode.INVALID_REQUEST, PROHIBITED)]
    assert (results[1].num_partitions, results[1].replication_factor, results[1].configs) == (-1, -1, [])
    assert set(c.topics) == {"t"}


def test_create_topics_of_cluster_metadata_is_invalid_request_for_the_super_user() -> None:
    c = secured_cluster()
    result = call(c, create_topics("__cluster_metadata"), 7, principal=ADMIN).topics[0]
    assert (result.name, result.error_code, result.error_message) == (
        "__cluster_metadata", ErrorCode.INVALID_REQUEST, PROHIBITED)
    assert "__cluster_metadata" not in c.topics


def test_create_topics_of_cluster_metadata_is_invalid_request_before_authorization() -> None:
    c = secured_cluster()  # User:alice has no ACL at all
    result = call(c, create_topics("__cluster_metadata"), 7).topics[0]
    assert (result.error_code, result.error_message) == (ErrorCode.INVALID_REQUEST, PROHIBITED)


def test_create_topics_of_cluster_metadata_validate_only_is_invalid_request() -> None:
    c = open_cluster()
    result = call(c, create_topics("__cluster_metadata", validate_only=True), 7).topics[0]
    assert (result.error_code, result.error_message) == (ErrorCode.INVALID_REQUEST, PROHIBITED)


def test_create_topics_of_cluster_metadata_twice_is_a_duplicate() -> None:
    c = open_cluster()
    result = call(c, create_topics("__cluster_metadata", "__cluster_metadata"), 7).topics
    assert [(r.name, r.error_code, r.error_message) for r in result] == [
        ("__cluster_metadata", ErrorCode.INVALID_REQUEST, "Duplicate topic name.")]


# -- DeleteTopics with delete.topic.enable=false (ControllerApis.deleteTopics) ----------------------------

def state(name: str | None, topic_id: uuid.UUID = ZERO_UUID) -> Any:
    return DeleteTopicsRequest.DeleteTopicState(name=name, topic_id=topic_id)


def delete_v6(*states: Any) -> Any:
    return DeleteTopicsRequest(topics=list(states), timeout_ms=1000)


def answers(response: Any) -> list[tuple[Any, ...]]:
    """(name, topic_id, error_code, error_message) of each result; the zero id decodes as None."""
    return [(r.name, r.topic_id or ZERO_UUID, r.error_code, r.error_message) for r in response.responses]


def test_delete_topics_disabled_answers_every_topic_as_given_with_no_message() -> None:
    c = open_cluster("t", "u", **{"delete.topic.enable": "false"})
    u_id, unknown = c.topics["u"].topic_id, uuid.uuid4()
    request = delete_v6(state("t"), state(None, u_id), state(None, unknown), state(None), state("t"),
                        state("missing"))
    disabled = ErrorCode.TOPIC_DELETION_DISABLED
    # DeleteTopicsRequest.getErrorResponse: one result per topic of the request, in its order, nothing resolved
    assert answers(call(c, request, 6)) == [
        ("t", ZERO_UUID, disabled, None), (None, u_id, disabled, None), (None, unknown, disabled, None),
        (None, ZERO_UUID, disabled, None), ("t", ZERO_UUID, disabled, None), ("missing", ZERO_UUID, disabled, None)]
    assert set(c.topics) == {"t", "u"}


@pytest.mark.parametrize("version, code", [(1, ErrorCode.INVALID_REQUEST), (2, ErrorCode.INVALID_REQUEST),
                                           (3, ErrorCode.TOPIC_DELETION_DISABLED),
                                           (5, ErrorCode.TOPIC_DELETION_DISABLED)])
def test_delete_topics_disabled_by_name_is_invalid_request_before_v3(version: int, code: ErrorCode) -> None:
    c = open_cluster("t", **{"delete.topic.enable": "false"})
    response = call(c, DeleteTopicsRequest(topic_names=["t", "missing"], timeout_ms=1000), version)
    assert [(r.name, r.error_code) for r in response.responses] == [("t", code), ("missing", code)]
    if version >= 5:  # error_message is on the wire from v5
        assert [r.error_message for r in response.responses] == [None, None]
    assert "t" in c.topics


def test_delete_topics_disabled_is_refused_before_authorization() -> None:
    c = secured_cluster(**{"delete.topic.enable": "false"})
    c.create_topic("t", 1, 1)
    assert answers(call(c, delete_v6(state("t")), 6)) == [
        ("t", ZERO_UUID, ErrorCode.TOPIC_DELETION_DISABLED, None)]


# -- DeleteTopics v6: how a topic is named (ControllerApis.deleteTopics) ----------------------------------

def test_delete_topics_with_neither_name_nor_id_is_invalid_request_for_that_topic() -> None:
    c = open_cluster("t")
    t_id = c.topics["t"].topic_id
    assert answers(call(c, delete_v6(state(None), state("t")), 6)) == [
        (None, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified."),
        ("t", t_id, 0, None)]
    assert "t" not in c.topics


def test_delete_topics_with_both_name_and_id_is_invalid_request_and_deletes_nothing() -> None:
    c = open_cluster("t")
    t_id = c.topics["t"].topic_id
    assert answers(call(c, delete_v6(state("t", t_id)), 6)) == [
        ("t", t_id, ErrorCode.INVALID_REQUEST, "You may not specify both topic name and topic id.")]
    assert "t" in c.topics


def test_delete_topics_with_a_name_twice_is_one_duplicate_and_deletes_nothing() -> None:
    c = open_cluster("t")
    response = call(c, DeleteTopicsRequest(topic_names=["t", "t"], timeout_ms=1000), 5)
    assert [(r.name, r.error_code, r.error_message) for r in response.responses] == [
        ("t", ErrorCode.INVALID_REQUEST, "Duplicate topic name.")]
    assert "t" in c.topics


def test_delete_topics_with_an_id_twice_is_one_duplicate_and_deletes_nothing() -> None:
    c = open_cluster("t")
    t_id = c.topics["t"].topic_id
    assert answers(call(c, delete_v6(state(None, t_id), state(None, t_id)), 6)) == [
        (None, t_id, ErrorCode.INVALID_REQUEST, "Duplicate topic id.")]
    assert "t" in c.topics


def test_delete_topics_with_a_name_and_its_id_is_invalid_request_and_deletes_nothing() -> None:
    c = open_cluster("t")
    t_id = c.topics["t"].topic_id
    # the id's own entry is dropped: one answer, for the name
    assert answers(call(c, delete_v6(state("t"), state(None, t_id)), 6)) == [
        ("t", t_id, ErrorCode.INVALID_REQUEST, "The provided topic name maps to an ID that was already supplied.")]
    assert "t" in c.topics


def test_delete_topics_of_an_unknown_id_carries_the_errors_default_message() -> None:
    c = open_cluster()
    unknown = uuid.uuid4()
    assert answers(call(c, delete_v6(state(None, unknown)), 6)) == [
        (None, unknown, ErrorCode.UNKNOWN_TOPIC_ID, "This server does not host this topic ID.")]


# -- DescribeConfigs with a resource type Kafka does not know (ConfigHelper.handleDescribeConfigsRequest) --

def describe_configs(*resources: tuple[int, str]) -> Any:
    R = DescribeConfigsRequest.DescribeConfigsResource
    return DescribeConfigsRequest(resources=[R(resource_type=rtype, resource_name=name, configuration_keys=None)
                                             for rtype, name in resources],
                                  include_synonyms=False, include_documentation=False)


@pytest.mark.parametrize("version", [1, 4])
@pytest.mark.parametrize("unknown_type", [0, 1, 3, 64, -1])
def test_describe_configs_with_an_unknown_resource_type_fails_every_resource(version: int, unknown_type: int) -> None:
    c = open_cluster("t")
    response = call(c, describe_configs((TOPIC, "t"), (unknown_type, "x"), (BROKER, "1")), version)
    assert [(r.resource_type, r.resource_name, r.error_code, r.error_message, r.configs)
            for r in response.results] == [
        (TOPIC, "t", ErrorCode.INVALID_REQUEST, INVALID_REQUEST_MESSAGE, []),
        (unknown_type, "x", ErrorCode.INVALID_REQUEST, INVALID_REQUEST_MESSAGE, []),
        (BROKER, "1", ErrorCode.INVALID_REQUEST, INVALID_REQUEST_MESSAGE, [])]


def test_describe_configs_with_an_unknown_resource_type_fails_before_authorization() -> None:
    c = secured_cluster()
    response = call(c, describe_configs((TOPIC, "t"), (0, "x")), 4)
    assert [(r.error_code, r.error_message) for r in response.results] == [
        (ErrorCode.INVALID_REQUEST, INVALID_REQUEST_MESSAGE)] * 2
