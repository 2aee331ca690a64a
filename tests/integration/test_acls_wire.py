"""ACLs over real connections: SASL principals, ACLs created through the API, the fixtures logged in as super user."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from minibroker.client.security import ClientSecurity
from minibroker.core.acls import STANDARD_AUTHORIZER, AclOperation, AclPermissionType, PatternType, ResourceType
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import CreateAclsRequest, DescribeAclsRequest, ProduceRequest
from minibroker.testing.embedded import BrokerThread
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerThread]:
    with BrokerThread.secured(config={"authorizer.class.name": STANDARD_AUTHORIZER}) as running:
        yield running


def connect(broker: BrokerThread, user: str) -> WireClient:
    assert broker.security is not None
    host, port = broker.cluster.nodes[0].address("SASL_PLAINTEXT")
    return WireClient(host, port, security=ClientSecurity("SASL_PLAINTEXT", "PLAIN", user,
                                                          broker.security.users[user]))


def produce(wire: WireClient, topic: str) -> int:
    batch = records.build_batch([(b"k", b"v")], timestamp=1_700_000_000_000)
    answer = wire.request(ProduceRequest(transactional_id=None, acks=-1, timeout_ms=5000, topic_data=[
        ProduceRequest.TopicProduceData(name=topic, partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=batch)])]), 9)
    return int(answer.responses[0].partition_responses[0].error_code)


def allow_write(topic: str, principal: str) -> Any:
    return CreateAclsRequest(creations=[CreateAclsRequest.AclCreation(
        resource_type=ResourceType.TOPIC, resource_name=topic, resource_pattern_type=PatternType.LITERAL,
        principal=principal, host="*", operation=AclOperation.WRITE, permission_type=AclPermissionType.ALLOW)])


def test_fixtures_create_topics_as_the_super_user_while_acls_hold_everyone_else(broker: BrokerThread) -> None:
    topic = broker.create_topic(unique_topic("acl"), 1)
    with connect(broker, "alice") as alice, connect(broker, "admin") as admin:
        assert produce(alice, topic) == ErrorCode.TOPIC_AUTHORIZATION_FAILED
        refused = alice.request(allow_write(topic, "User:alice"), 3)
        assert refused.results[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        assert admin.request(allow_write(topic, "User:alice"), 3).results[0].error_code == 0
        assert produce(alice, topic) == 0
        assert produce(admin, topic) == 0
    log = broker.call(lambda: broker.cluster.topics[topic].partitions[0].log.log_end_offset)
    assert log == 2


def test_a_plaintext_client_is_user_anonymous_and_may_do_nothing_without_acls(broker: BrokerThread) -> None:
    topic = broker.create_topic(unique_topic("anon"), 1)
    host, port = broker.cluster.nodes[0].address("PLAINTEXT")
    with WireClient(host, port) as anonymous:
        assert produce(anonymous, topic) == ErrorCode.TOPIC_AUTHORIZATION_FAILED


def test_a_broker_process_behind_sasl_with_acls_creates_topics_with_the_given_client_security() -> None:
    from minibroker.testing.process import start_broker

    jaas = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
            'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
    process = start_broker("listeners=SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms=PLAIN",
                           f"listener.name.sasl_plaintext.plain.sasl.jaas.config={jaas}",
                           f"authorizer.class.name={STANDARD_AUTHORIZER}", "super.users=User:admin",
                           security=ClientSecurity("SASL_PLAINTEXT", "PLAIN", "admin", "admin-secret"))
    try:
        topic = process.create_topic(unique_topic("process"), 1)
        alice = ClientSecurity("SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret")
        with WireClient(process.host, process.port, security=alice) as wire:
            assert produce(wire, topic) == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    finally:
        process.stop()


def creation(topic: str, **fields: Any) -> Any:
    values = {"resource_type": ResourceType.TOPIC, "resource_name": topic, "resource_pattern_type": PatternType.LITERAL,
              "principal": "User:alice", "host": "*", "operation": AclOperation.READ,
              "permission_type": AclPermissionType.ALLOW, **fields}
    return CreateAclsRequest.AclCreation(**values)


def described(wire: WireClient, topic: str) -> Any:
    return wire.request(DescribeAclsRequest(
        resource_type_filter=ResourceType.TOPIC, resource_name_filter=topic, pattern_type_filter=PatternType.ANY,
        principal_filter=None, host_filter=None, operation=AclOperation.ANY, permission_type=AclPermissionType.ANY), 3)


def test_create_acls_answers_as_kafka_4_3(broker: BrokerThread) -> None:
    """What Kafka 4.3.1 answered (differential scenario acls_create_describe_delete): an ANY or MATCH anywhere
    fails every creation of the request with UNKNOWN_SERVER_ERROR and stores none; a resource type Kafka does not
    know (but not 0, which closes) is UNKNOWN; a principal without a colon is Kafka's parse error; "" on success."""
    topic = unique_topic("acl-create")
    with connect(broker, "admin") as admin:
        mixed = admin.request(CreateAclsRequest(creations=[creation(topic),
                                                           creation(topic, operation=AclOperation.ANY)]), 3)
        assert [(r.error_code, r.error_message) for r in mixed.results] == [(ErrorCode.UNKNOWN_SERVER_ERROR, None)] * 2
        assert described(admin, topic).resources == []
        unknown = admin.request(CreateAclsRequest(creations=[creation(topic, resource_type=42)]), 3)
        assert [(r.error_code, r.error_message) for r in unknown.results] == [
            (ErrorCode.INVALID_REQUEST, "Invalid resourceType UNKNOWN")]
        no_colon = admin.request(CreateAclsRequest(creations=[creation(topic, principal="alice")]), 3)
        assert no_colon.results[0].error_message == ("Could not parse principal from `alice` (no colon is present "
                                                     "separating the principal type from the principal name)")
        created = admin.request(CreateAclsRequest(creations=[creation(topic)]), 3)
        assert [(r.error_code, r.error_message) for r in created.results] == [(0, "")]
        found = described(admin, topic)
        assert (found.error_code, found.error_message, len(found.resources)) == (0, "", 1)
