"""Group APIs answered as Apache Kafka 4.3.1 answers them (found by tests/differential)."""

from __future__ import annotations

from typing import Any

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
    JoinGroupRequest,
)
from tests.apis.authz import NOW, call


def cluster_with_topic() -> Cluster:
    c = Cluster(BrokerConfig({"node.id": 1}), clock=ManualClock(NOW))
    c.create_topic("t", 2, 1)
    return c


def join_heartbeat(member: str, names: list[str] | None, regex: str | None = None, group: str = "g") -> Any:
    return ConsumerGroupHeartbeatRequest(
        group_id=group, member_id=member, member_epoch=0, instance_id=None, rack_id=None, rebalance_timeout_ms=60000,
        subscribed_topic_names=names, subscribed_topic_regex=regex, server_assignor=None, topic_partitions=[])


def test_consumer_group_heartbeat_join_without_names_or_regex_has_kafkas_message() -> None:
    answer = call(cluster_with_topic(), join_heartbeat("m1", None), 1)
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.INVALID_REQUEST,
        "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")


def test_consumer_group_heartbeat_join_with_an_empty_name_list_is_a_member_without_topics() -> None:
    answer = call(cluster_with_topic(), join_heartbeat("m1", []), 1)
    assert (answer.error_code, answer.member_id) == (0, "m1")
    assert answer.assignment is not None and answer.assignment.topic_partitions == []


def test_classic_join_of_a_consumer_group_with_another_protocol_type_answers_the_requested_member_id() -> None:
    c = cluster_with_topic()
    assert call(c, join_heartbeat("m1", ["t"]), 1).error_code == 0
    answer = call(c, JoinGroupRequest(group_id="g", session_timeout_ms=30000, rebalance_timeout_ms=60000, member_id="",
                                      group_instance_id=None, protocol_type="other",
                                      protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="x", metadata=b"\0")],
                                      reason=None), 9)
    assert (answer.error_code, answer.member_id) == (ErrorCode.INCONSISTENT_GROUP_PROTOCOL, "")


def test_consumer_group_describe_gives_a_member_without_a_regex_an_empty_regex() -> None:
    c = cluster_with_topic()
    assert call(c, join_heartbeat("m1", []), 1).error_code == 0
    for version in (0, 1):
        answer = call(c, ConsumerGroupDescribeRequest(group_ids=["g"], include_authorized_operations=False), version)
        assert answer.groups[0].members[0].subscribed_topic_regex == ""
