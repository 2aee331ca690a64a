"""ACLs with real clients: the Java Admin client manages ACLs and SCRAM users; producers and consumers
(Java, confluent-kafka) are refused by the StandardAuthorizer as Apache Kafka refuses them.

One broker for the module, with `authorizer.class.name` set and `User:admin` a super user; the users admin,
alice and bob log in with PLAIN (SASL_PLAINTEXT) or SCRAM-SHA-512 (SASL_SSL). Each test uses its own topic
names and ACLs. An ACL is written `TYPE,NAME,PATTERN,PRINCIPAL,HOST,OPERATION,PERMISSION` (as AclScenario.java
reads and prints it; `-` is a null name, principal or host in a filter).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AclBinding, AdminClient, NewTopic

from minibroker.core.acls import STANDARD_AUTHORIZER
from minibroker.testing.embedded import BrokerThread
from tests.integration.clients import JavaClients

pytestmark = pytest.mark.java

USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerThread]:
    """BrokerThread.secured() with bob as a third user and the StandardAuthorizer (admin is the super user)."""
    with BrokerThread.secured(tmp_path_factory.mktemp("pki"), config={"authorizer.class.name": STANDARD_AUTHORIZER},
                              users=USERS) as started:
        yield started


@pytest.fixture(scope="module")
def admin(broker: BrokerThread) -> AdminClient:
    """confluent-kafka's AdminClient as the super user, to set each test up."""
    return AdminClient(librdkafka(broker, "admin"))


def librdkafka(broker: BrokerThread, user: str, listener: str = "SASL_PLAINTEXT") -> dict[str, Any]:
    """confluent-kafka settings for `user`: PLAIN on SASL_PLAINTEXT, SCRAM-SHA-512 on SASL_SSL."""
    assert broker.security is not None
    mechanism = "PLAIN" if listener == "SASL_PLAINTEXT" else "SCRAM-SHA-512"
    return broker.security.librdkafka(listener, mechanism, user)


def login_as(broker: BrokerThread, user: str, listener: str = "SASL_PLAINTEXT") -> list[str]:
    """AclScenario's `set` command switching to `user` (PLAIN on SASL_PLAINTEXT, SCRAM-SHA-512 on SASL_SSL)."""
    assert broker.security is not None
    mechanism = "PLAIN" if listener == "SASL_PLAINTEXT" else "SCRAM-SHA-512"
    return ["set", *(f"{k}={v}" for k, v in broker.security.java(listener, mechanism, user).items())]


class _Target:
    """What JavaClients.run needs of a broker: the bootstrap address (the `set` commands replace it)."""

    def __init__(self, broker: BrokerThread) -> None:
        assert broker.security is not None
        self.bootstrap_servers = broker.security.bootstrap("SASL_PLAINTEXT")

    def log_text(self) -> str:
        return ""  # the broker runs in this process: its log is pytest's captured log


def scenario(java: JavaClients, broker: BrokerThread, *commands: str | list[str]) -> list[dict[str, Any]]:
    """Runs AclScenario (see AclScenario.java); one result per command that is not a `set`."""
    results = java.scenario(_Target(broker), "AclScenario", commands)
    for result in results:
        assert result["ok"] or not result["cmd"].startswith("set "), result
    return [r for r in results if not r["cmd"].startswith("set ")]


def acl_binding(text: str) -> AclBinding:
    """confluent-kafka's AclBinding for `TYPE,NAME,PATTERN,PRINCIPAL,HOST,OPERATION,PERMISSION`."""
    return AclBinding(*text.split(","))


def create_acls(admin: AdminClient, *acls: str) -> None:
    for future in admin.create_acls([acl_binding(a) for a in acls], request_timeout=20).values():
        future.result(timeout=20)


def create_topic(admin: AdminClient, name: str) -> None:
    admin.create_topics([NewTopic(name, 1, 1)], request_timeout=20)[name].result(timeout=20)


def broker_acls(broker: BrokerThread) -> list[str]:
    """Every ACL the broker's authorizer holds, written as AclScenario writes them, sorted."""
    assert broker.cluster.authorizer is not None
    return sorted(",".join((a.resource_type.name, a.resource_name, a.pattern_type.name, a.principal, a.host,
                            a.operation.name, a.permission_type.name))
                  for a in broker.call(lambda: list(broker.cluster.authorizer or ())))


def read_all(broker: BrokerThread, topic: str) -> list[bytes | None]:
    """Every record value of partition 0 of `topic`, read by the super user without a group."""
    consumer = Consumer({**librdkafka(broker, "admin"), "group.id": "acl-reader", "enable.auto.commit": False})
    try:
        high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=20)[1]
        consumer.assign([TopicPartition(topic, 0, 0)])
        values: list[bytes | None] = []
        deadline = time.monotonic() + 20
        while len(values) < high:
            assert time.monotonic() < deadline, f"read {len(values)} of {high} records of {topic}"
            message = consumer.poll(1)
            if message is not None:
                assert message.error() is None, message.error()
                values.append(message.value())
        return values
    finally:
        consumer.close()


def test_the_java_admin_client_creates_describes_and_deletes_acls_and_alice_may_not(
        broker: BrokerThread, java: JavaClients) -> None:
    topic_acls = ["TOPIC,acl1-t,LITERAL,User:alice,*,WRITE,ALLOW", "TOPIC,acl1-t,LITERAL,User:alice,*,DESCRIBE,ALLOW",
                  "TOPIC,acl1-t,LITERAL,User:bob,*,WRITE,DENY"]
    prefixed = "TOPIC,acl1-,PREFIXED,User:alice,*,READ,ALLOW"
    before = broker_acls(broker)
    created, every, alices, matching_topic, matching_prefix, deleted, after = scenario(
        java, broker, login_as(broker, "admin", "SASL_SSL"),
        ["create-acls", *topic_acls, prefixed],
        "describe-acls ANY,-,ANY,-,-,ANY,ANY",
        "describe-acls ANY,-,ANY,User:alice,-,ANY,ANY",
        "describe-acls TOPIC,acl1-t,MATCH,-,-,ANY,ANY",
        "describe-acls TOPIC,acl1-other,MATCH,-,-,ANY,ANY",
        "delete-acls TOPIC,acl1-t,LITERAL,-,-,ANY,ANY TOPIC,acl1-,PREFIXED,User:alice,-,READ,ALLOW",
        "describe-acls TOPIC,acl1-t,MATCH,-,-,ANY,ANY")
    assert created["ok"], created
    assert every["acls"] == sorted([*before, *topic_acls, prefixed])
    assert alices["acls"] == sorted(a for a in every["acls"] if ",User:alice," in a)
    assert matching_topic["acls"] == sorted([*topic_acls, prefixed])  # the PREFIXED one covers acl1-t
    assert matching_prefix["acls"] == [prefixed]
    assert deleted["deleted"] == [sorted(topic_acls), [prefixed]]
    assert after["acls"] == []
    assert broker_acls(broker) == before

    refused = scenario(java, broker, login_as(broker, "alice"),
                       ["create-acls", *topic_acls],
                       "describe-acls ANY,-,ANY,-,-,ANY,ANY",
                       "delete-acls ANY,-,ANY,-,-,ANY,ANY")
    assert [(r["ok"], r.get("error")) for r in refused] == [(False, "ClusterAuthorizationException")] * 3, refused
    assert broker_acls(broker) == before  # nothing created, nothing deleted


def test_the_java_admin_client_alters_scram_users_who_then_log_in(broker: BrokerThread, java: JavaClients) -> None:
    upserted, described, refused = scenario(
        java, broker, login_as(broker, "admin"),
        "alter-scram upsert,carol,SCRAM-SHA-512,8192,carol-secret upsert,dave,SCRAM-SHA-256,4096,dave-secret",
        "describe-scram carol dave nobody",
        login_as(broker, "alice"),
        "alter-scram upsert,erin,SCRAM-SHA-512,8192,erin-secret")
    assert upserted["results"] == {"carol": None, "dave": None}, upserted
    assert described["users"] == {"carol": [{"mechanism": "SCRAM-SHA-512", "iterations": 8192}],
                                  "dave": [{"mechanism": "SCRAM-SHA-256", "iterations": 4096}],
                                  "nobody": "ResourceNotFoundException"}, described
    assert refused["results"] == {"erin": "ClusterAuthorizationException"}, refused

    carol = {**librdkafka(broker, "admin", "SASL_SSL"), "sasl.username": "carol", "sasl.password": "carol-secret"}
    assert login_error(carol) is None
    assert "SASL authentication error" in str(login_error({**carol, "sasl.username": "erin",
                                                          "sasl.password": "erin-secret"}))

    deleted, gone = scenario(java, broker, login_as(broker, "admin"),
                             "alter-scram delete,carol,SCRAM-SHA-512", "describe-scram carol")
    assert deleted["results"] == {"carol": None}
    assert gone["users"] == {"carol": "ResourceNotFoundException"}
    assert "SASL authentication error" in str(login_error(carol))


def login_error(settings: dict[str, Any]) -> str | None:
    """None when confluent-kafka logs in and gets metadata with `settings`, else the error it reports."""
    errors: list[str] = []
    config: dict[str, Any] = {**settings, "error_cb": lambda err: errors.append(str(err))}
    admin = AdminClient(config)
    deadline = time.monotonic() + 15
    while not errors:
        try:
            admin.list_topics(timeout=1)
            return None
        except KafkaException as exc:  # list_topics times out while the login fails; error_cb says why
            admin.poll(0)
            if time.monotonic() > deadline:
                return str(exc)
    return errors[0]


def test_a_denied_java_producer_gets_topic_authorization_exception_and_writes_nothing(
        broker: BrokerThread, java: JavaClients, admin: AdminClient) -> None:
    create_topic(admin, "acl3-t")
    # bob may write every acl3- topic but this one: his idempotent producer gets a producer id
    # (WRITE on some topic) and Metadata shows him the topic (WRITE implies DESCRIBE); only Produce refuses
    create_acls(admin, "TOPIC,acl3-t,LITERAL,User:alice,*,WRITE,ALLOW", "TOPIC,acl3-,PREFIXED,User:bob,*,WRITE,ALLOW",
                "TOPIC,acl3-t,LITERAL,User:bob,*,WRITE,DENY")
    alice, bob, bob_plain = scenario(java, broker, login_as(broker, "alice", "SASL_SSL"), "produce acl3-t 3 alice",
                                     login_as(broker, "bob"), "produce acl3-t 2 bob",
                                     "produce acl3-t 2 bob enable.idempotence=false")
    assert alice["offsets"] == [0, 1, 2], alice
    for refused in (bob, bob_plain):
        assert (refused["ok"], refused["error"]) == (False, "TopicAuthorizationException"), refused
        assert "acl3-t" in refused["message"]
    assert read_all(broker, "acl3-t") == [b"alice-0", b"alice-1", b"alice-2"]


def delivery_reports(settings: dict[str, Any], topic: str, values: list[bytes]) -> list[Any]:
    """The delivery error (None when delivered) of each value produced with confluent-kafka."""
    producer = Producer({**settings, "message.timeout.ms": 10000})
    reports: list[Any] = []
    for value in values:
        producer.produce(topic, value, partition=0, on_delivery=lambda err, _msg: reports.append(err))
    assert producer.flush(20) == 0
    return reports


def test_a_denied_confluent_producer_gets_topic_authorization_failed(broker: BrokerThread,
                                                                     admin: AdminClient) -> None:
    create_topic(admin, "acl4-t")
    create_topic(admin, "acl4-hidden")
    # bob sees acl4-t (DESCRIBE) but may not write it: Produce refuses; acl4-hidden he may not even see
    create_acls(admin, "TOPIC,acl4-t,LITERAL,User:alice,*,WRITE,ALLOW",
                "TOPIC,acl4-t,LITERAL,User:bob,*,DESCRIBE,ALLOW", "TOPIC,acl4-t,LITERAL,User:bob,*,WRITE,DENY")
    assert delivery_reports(librdkafka(broker, "alice", "SASL_SSL"), "acl4-t", [b"a0", b"a1"]) == [None, None]
    for topic in ("acl4-t", "acl4-hidden"):
        reports = delivery_reports(librdkafka(broker, "bob"), topic, [b"b0", b"b1"])
        assert [e.code() if e else None for e in reports] == [KafkaError.TOPIC_AUTHORIZATION_FAILED] * 2, reports
    assert read_all(broker, "acl4-t") == [b"a0", b"a1"]
    assert read_all(broker, "acl4-hidden") == []


def first_event(consumer: Consumer, timeout: float = 20) -> Any:
    """The first message or error the consumer delivers within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None:
            return message
    raise AssertionError(f"nothing delivered within {timeout} s")


def test_a_confluent_consumer_needs_read_on_the_topic_and_group(broker: BrokerThread, admin: AdminClient) -> None:
    create_topic(admin, "acl5-t")
    assert delivery_reports(librdkafka(broker, "admin"), "acl5-t", [b"r0", b"r1", b"r2"]) == [None] * 3
    # bob: READ on his group and DESCRIBE on the topic, but no READ on it; alice: READ on both
    create_acls(admin, "TOPIC,acl5-t,LITERAL,User:bob,*,DESCRIBE,ALLOW", "GROUP,acl5-bob,LITERAL,User:bob,*,READ,ALLOW",
                "TOPIC,acl5-t,LITERAL,User:alice,*,READ,ALLOW", "GROUP,acl5-alice,LITERAL,User:alice,*,READ,ALLOW")
    group = {"auto.offset.reset": "earliest", "enable.auto.commit": False}
    bob = {**librdkafka(broker, "bob"), **group, "group.id": "acl5-bob"}
    denied = Consumer(bob)
    try:
        denied.subscribe(["acl5-t"])
        event = first_event(denied)
        assert event.error() is not None and event.error().code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, (
            event.error() or event.value())
    finally:
        denied.close()
    assigned = Consumer(bob)
    try:
        assigned.assign([TopicPartition("acl5-t", 0, 0)])  # no group: Fetch itself refuses
        event = first_event(assigned)
        assert event.error() is not None and event.error().code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, (
            event.error() or event.value())
    finally:
        assigned.close()

    allowed = Consumer({**librdkafka(broker, "alice", "SASL_SSL"), **group, "group.id": "acl5-alice"})
    try:
        allowed.subscribe(["acl5-t"])
        values: list[bytes] = []
        while len(values) < 3:
            message = first_event(allowed)
            assert message.error() is None, message.error()
            values.append(message.value())
        assert values == [b"r0", b"r1", b"r2"]
    finally:
        allowed.close()
