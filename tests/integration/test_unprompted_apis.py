"""APIs a client may send without checking ApiVersions first get Kafka's answer, not a closed connection.

DescribeLogDirs is served (one log dir, the size of each partition). The ACL APIs answer
SECURITY_DISABLED, as a Kafka broker without an authorizer does. SaslHandshake and
SaslAuthenticate on this PLAINTEXT listener answer ILLEGAL_SASL_STATE, as KafkaApis does.
Each is checked on the wire at every version, and with the real clients that call it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError as ConfluentError
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from kafka.admin import ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient
from kafka.admin import ResourcePatternFilter as KafkaPythonPatternFilter
from kafka.admin import ResourceType as KafkaPythonResourceType
from kafka.errors import SecurityDisabledError

from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    ApiVersionsRequest,
    CreateAclsRequest,
    DeleteAclsRequest,
    DescribeAclsRequest,
    DescribeLogDirsRequest,
    MetadataRequest,
    SaslAuthenticateRequest,
    SaslHandshakeRequest,
)
from minibroker.testing.process import BrokerProcess, start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.clients import JAVA_CURRENT, JavaClients, ok
from tests.integration.test_wire_protocol import create_topic, produce_request

DESCRIBE_ACLS, CREATE_ACLS, DELETE_ACLS, DESCRIBE_LOG_DIRS = 29, 30, 31, 35
SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
# ResourceType, PatternType, AclOperation and AclPermissionType codes (0 is UNKNOWN in each)
UNKNOWN, ANY, TOPIC, LITERAL, READ, ALLOW = 0, 1, 2, 3, 3, 3
LOG_DIR = "/tmp/kafka-logs"  # Kafka's default log.dir


def still_answers(wire: WireClient) -> None:
    """The connection is still open: a Metadata request on it gets its answer."""
    assert wire.request(MetadataRequest(topics=[]), 12).brokers


def topic_with_one_batch(wire: WireClient) -> tuple[str, int]:
    """A new topic with two partitions, one batch in partition 0; its name and the batch's size."""
    topic = unique_topic("logdirs")
    create_topic(wire, topic, partitions=2)
    batch = records.build_batch([(b"k", b"v" * 100)], timestamp=int(time.time() * 1000))
    answer = wire.request(produce_request(topic, batch), 9).responses[0].partition_responses[0]
    assert answer.error_code == 0
    return topic, len(batch)


def described(response: Any, topic: str) -> dict[int, Any]:
    """Partition index -> DescribeLogDirsPartition of `topic` in the only log dir."""
    (result,) = response.results
    return {p.partition_index: p for t in result.topics if t.name == topic for p in t.partitions}


def acl_filter(**overrides: int) -> dict[str, Any]:
    fields: dict[str, Any] = dict(resource_type_filter=ANY, resource_name_filter=None, pattern_type_filter=ANY,
                                  principal_filter=None, host_filter=None, operation=ANY, permission_type=ANY)
    return {**fields, **overrides}


def acl_creation(topic: str, **overrides: int) -> Any:
    fields: dict[str, Any] = dict(resource_type=TOPIC, resource_name=topic, resource_pattern_type=LITERAL,
                                  principal="User:alice", host="*", operation=READ, permission_type=ALLOW)
    return CreateAclsRequest.AclCreation(**{**fields, **overrides})


# -- ApiVersions ------------------------------------------------------------------


def advertised(wire: WireClient) -> dict[int, tuple[int, int]]:
    response = wire.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


@pytest.fixture(scope="module")
def cluster() -> Iterator[BrokerProcess]:
    """Three nodes: node 0 the latest, node 1 speaking as Kafka 2.8, node 2 as Kafka 4.2."""
    process = start_broker(extra_args=("--nodes", "3", "--node-profile", "1=2.8", "--node-profile", "2=4.2"))
    yield process
    process.stop()


def node_ports(cluster: BrokerProcess) -> dict[int, int]:
    with WireClient(cluster.host, cluster.port) as wire:
        return {b.node_id: b.port for b in wire.request(MetadataRequest(topics=[]), 12).brokers}


def test_api_versions_advertises_them_with_each_releases_ranges(cluster):
    by_node = {}
    for node, port in node_ports(cluster).items():
        with WireClient(cluster.host, port) as wire:
            ranges = advertised(wire)
        by_node[node] = {key: ranges.get(key) for key in (17, 29, 30, 31, 35, 36)}
    # as Kafka, on a PLAINTEXT listener too; v0 of the ACL APIs and DescribeLogDirs went in 4.0 (KIP-896), so
    # nodes speaking as 3.9 and older still serve it
    assert by_node[0] == {17: (0, 1), 29: (1, 3), 30: (1, 3), 31: (1, 3), 35: (1, 5), 36: (0, 2)}
    assert by_node[2] == {17: (0, 1), 29: (1, 3), 30: (1, 3), 31: (1, 3), 35: (1, 4), 36: (0, 2)}
    assert by_node[1] == {17: (0, 1), 29: (0, 2), 30: (0, 2), 31: (0, 2), 35: (0, 2), 36: (0, 2)}


# -- DescribeLogDirs ----------------------------------------------------------------


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_describe_log_dirs_describes_one_log_dir_with_partition_sizes(wire, version):
    topic, batch_size = topic_with_one_batch(wire)
    response = wire.request(DescribeLogDirsRequest(topics=None), version)
    assert response.error_code == 0
    (result,) = response.results
    assert (result.error_code, result.log_dir, result.is_cordoned) == (0, LOG_DIR, False)
    partitions = described(response, topic)
    assert {i: (p.partition_size, p.offset_lag, p.is_future_key) for i, p in partitions.items()} == {
        0: (batch_size, 0, False), 1: (0, 0, False)}
    if version >= 4:  # the volume is memory
        assert 0 < result.usable_bytes <= result.total_bytes
    else:
        assert result.total_bytes == result.usable_bytes == -1  # not on the wire: the schema default
    still_answers(wire)


def test_describe_log_dirs_describes_only_the_requested_partitions(wire):
    topic, _ = topic_with_one_batch(wire)
    other, _ = topic_with_one_batch(wire)
    request = DescribeLogDirsRequest(topics=[
        DescribeLogDirsRequest.DescribableLogDirTopic(topic=topic, partitions=[1, 7]),
        DescribeLogDirsRequest.DescribableLogDirTopic(topic=other, partitions=[]),
        DescribeLogDirsRequest.DescribableLogDirTopic(topic="no-such-topic", partitions=[0]),
    ])
    (result,) = wire.request(request, 4).results
    # unknown partitions and topics are left out, and so is a topic none of whose partitions was asked for
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in result.topics] == [(topic, [1])]


def test_describe_log_dirs_describes_the_replicas_of_the_node_asked(cluster):
    topic = unique_topic("logdirs")
    with WireClient(cluster.host, cluster.port) as wire:
        create_topic(wire, topic, partitions=6)
        (described_topic,) = wire.request(MetadataRequest(topics=[
            MetadataRequest.MetadataRequestTopic(name=topic)]), 12).topics
    replicas = {p.partition_index: p.replica_nodes for p in described_topic.partitions}
    for node, port in node_ports(cluster).items():
        with WireClient(cluster.host, port) as wire:
            (result,) = wire.request(DescribeLogDirsRequest(topics=None), 2).results  # 2.8 has v1-2
        hosted = sorted(p.partition_index for t in result.topics if t.name == topic for p in t.partitions)
        assert hosted == sorted(i for i, nodes in replicas.items() if node in nodes) and hosted, node


# -- the ACL APIs without an authorizer -------------------------------------------------------


@pytest.mark.parametrize("version", [1, 2, 3])
def test_describe_acls_without_an_authorizer_is_security_disabled(wire, version):
    response = wire.request(DescribeAclsRequest(**acl_filter()), version)
    assert (response.error_code, response.error_message, response.resources) == (
        ErrorCode.SECURITY_DISABLED, "No Authorizer is configured on the broker", [])
    still_answers(wire)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_create_acls_without_an_authorizer_is_security_disabled_for_each_acl(wire, version):
    request = CreateAclsRequest(creations=[acl_creation("a"), acl_creation("b", operation=4)])
    response = wire.request(request, version)
    assert [(r.error_code, r.error_message) for r in response.results] == [
        (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")] * 2
    still_answers(wire)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_delete_acls_without_an_authorizer_is_security_disabled_for_each_filter(wire, version):
    request = DeleteAclsRequest(filters=[DeleteAclsRequest.DeleteAclsFilter(**acl_filter()),
                                         DeleteAclsRequest.DeleteAclsFilter(**acl_filter(resource_type_filter=TOPIC))])
    response = wire.request(request, version)
    assert [(r.error_code, r.error_message, r.matching_acls) for r in response.filter_results] == [
        (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.", [])] * 2
    still_answers(wire)


@pytest.mark.parametrize(("request_", "version"), [
    pytest.param(DescribeAclsRequest(**acl_filter(operation=UNKNOWN)), 3, id="describe-unknown-operation"),
    pytest.param(DescribeAclsRequest(**acl_filter(pattern_type_filter=UNKNOWN)), 1, id="describe-unknown-pattern"),
    pytest.param(CreateAclsRequest(creations=[acl_creation("t", resource_type=UNKNOWN)]), 3,
                 id="create-unknown-resource-type"),
    pytest.param(DeleteAclsRequest(filters=[DeleteAclsRequest.DeleteAclsFilter(
        **acl_filter(permission_type=UNKNOWN))]), 2, id="delete-unknown-permission"),
])
def test_acl_request_with_an_unknown_element_closes_the_connection(broker, wire, request_, version):
    # the request classes refuse UNKNOWN (0) codes while Kafka parses them, before any authorizer check
    wire.send_raw(wire.encode_request(request_, version))
    assert wire.is_closed_by_peer()
    with WireClient(broker.host, broker.port) as other:
        still_answers(other)


# -- SASL on a PLAINTEXT listener -------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1])
def test_sasl_handshake_on_a_plaintext_listener_is_illegal_sasl_state(wire, version):
    response = wire.request(SaslHandshakeRequest(mechanism="PLAIN"), version)
    assert (response.error_code, response.mechanisms) == (ErrorCode.ILLEGAL_SASL_STATE, [])
    still_answers(wire)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_sasl_authenticate_on_a_plaintext_listener_is_illegal_sasl_state(wire, version):
    response = wire.request(SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00secret"), version)
    assert (response.error_code, response.error_message, response.auth_bytes, response.session_lifetime_ms) == (
        ErrorCode.ILLEGAL_SASL_STATE, "SaslAuthenticate request received after successful authentication", b"", 0)
    still_answers(wire)


# -- real clients -----------------------------------------------------------------------------


def test_confluent_kafka_create_and_delete_acls_fail_with_security_disabled(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    binding = AclBinding(ResourceType.TOPIC, "t", ResourcePatternType.LITERAL, "User:alice", "*",
                         AclOperation.READ, AclPermissionType.ALLOW)
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                                  AclPermissionType.ANY)
    for futures in (admin.create_acls([binding], request_timeout=10), admin.delete_acls([everything],
                                                                                          request_timeout=10)):
        (future,) = futures.values()
        with pytest.raises(KafkaException) as refused:
            future.result()
        error = refused.value.args[0]
        assert (error.code(), error.str()) == (ConfluentError.SECURITY_DISABLED, "No Authorizer is configured.")
    # librdkafka drops DescribeAcls' top-level error code (against Kafka too): an empty list, but an answer
    assert admin.describe_acls(everything, request_timeout=10).result() == []


def test_confluent_kafka_sasl_client_fails_authentication_at_once(broker):
    errors: list[Any] = []
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "secret",
                         "error_cb": errors.append})
    deadline = time.monotonic() + 20
    while not errors and time.monotonic() < deadline:
        producer.poll(0.1)
    assert errors, "no error reported"
    assert errors[0].code() == ConfluentError._AUTHENTICATION
    assert "Request not valid in current SASL state" in errors[0].str()  # ILLEGAL_SASL_STATE, not a disconnect


def test_kafka_python_describes_log_dirs_and_gets_security_disabled_for_acls(broker):
    with WireClient(broker.host, broker.port) as wire:
        topic, batch_size = topic_with_one_batch(wire)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers, request_timeout_ms=10000)
    try:
        (node,) = admin.describe_log_dirs()
        (log_dir,) = node["log_dirs"]
        assert (log_dir["error_code"], log_dir["log_dir"]) == (0, LOG_DIR)
        sizes = {p["partition_index"]: p["partition_size"]
                 for t in log_dir["topics"] if t["name"] == topic for p in t["partitions"]}
        assert sizes == {0: batch_size, 1: 0}
        with pytest.raises(SecurityDisabledError, match="No Authorizer is configured on the broker"):
            admin.describe_acls(ACLFilter(principal=None, host="*", operation=ACLOperation.ANY,
                                          permission_type=ACLPermissionType.ANY,
                                          resource_pattern=KafkaPythonPatternFilter(
                                              KafkaPythonResourceType.ANY, None, ACLResourcePatternType.ANY)))
    finally:
        admin.close()


@pytest.mark.java
def test_java_admin_describes_log_dirs_and_gets_security_disabled_for_acls(broker, tmp_path: Path):
    with WireClient(broker.host, broker.port) as wire:
        topic, batch_size = topic_with_one_batch(wire)
    java = JavaClients(tmp_path, version=JAVA_CURRENT)
    log_dirs, describe, create, delete, sasl = java.scenario(broker, "UnpromptedApis", (
        "log-dirs 0", "describe-acls", f"create-acl {topic}", "delete-acls", "sasl-list-topics"))
    (log_dir,) = ok(log_dirs)["dirs"]
    assert (log_dir["path"], log_dir["error"]) == (LOG_DIR, None)
    assert 0 < log_dir["usable_bytes"] <= log_dir["total_bytes"]
    assert log_dir["replicas"][f"{topic}-0"] == {"size": batch_size, "offset_lag": 0, "future": False}
    assert log_dir["replicas"][f"{topic}-1"]["size"] == 0
    for refused, message in ((describe, "No Authorizer is configured on the broker"),
                             (create, "No Authorizer is configured."), (delete, "No Authorizer is configured.")):
        assert (refused["ok"], refused["error"], refused["message"]) == (False, "SecurityDisabledException", message)
    # the handshake is refused at once (ILLEGAL_SASL_STATE), rather than the connection dropping until a timeout
    assert (sasl["ok"], sasl["error"]) == (False, "IllegalSaslStateException"), sasl
