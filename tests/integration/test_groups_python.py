"""Consumer groups through confluent-kafka (librdkafka), kafka-python and aiokafka against a real broker process.

Covered: subscribe + consume + commit, close and restart resuming from the committed offsets; cooperative-sticky
incremental rebalancing (confluent-kafka); static membership rejoin without a rebalance (confluent-kafka,
kafka-python); expiry of a SIGKILLed member after its session timeout; each client's first-join time, printed
and stored in .cache/group-first-join/CLIENT.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.abc import ConsumerRebalanceListener as AioRebalanceListener
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka import ConsumerRebalanceListener as KpRebalanceListener
from kafka import KafkaConsumer
from kafka import TopicPartition as KpTopicPartition

from tests.helpers import unique_topic
from tests.integration.groups_common import create_topic, produce, report_first_join

#: Upper bound on any single wait for a group to settle.
SETTLE = 30.0


def index(value: bytes) -> int:
    """The record number i of a produced value b"v-I"."""
    return int(value.decode().split("-")[1])


def describe_group(broker: Any, group: str) -> Any:
    """confluent-kafka AdminClient.describe_consumer_groups for one group."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    return admin.describe_consumer_groups([group])[group].result(timeout=30)


def member_partitions(member: Any) -> list[int]:
    return sorted(tp.partition for tp in member.assignment.topic_partitions)


# -- confluent-kafka ----------------------------------------------------------------------------------------

class CfMember:
    """A confluent-kafka Consumer subscribed to a topic, recording its rebalance callbacks."""

    def __init__(self, broker: Any, topic: str, group: str, **config: Any) -> None:
        conf = {"bootstrap.servers": broker.bootstrap_servers, "group.id": group, "auto.offset.reset": "earliest",
                "enable.auto.commit": False, "heartbeat.interval.ms": 300, **config}
        self.created_at = time.monotonic()
        self.consumer = Consumer(conf)
        self.events: list[tuple[str, list[int], float]] = []
        self.messages: list[Any] = []
        self.closed = False
        self.subscribed_at = time.monotonic()
        self.consumer.subscribe([topic], on_assign=self._on("assign"), on_revoke=self._on("revoke"),
                                on_lost=self._on("lost"))

    def _on(self, kind: str) -> Callable[[Any, list[TopicPartition]], None]:
        def callback(_consumer: Any, partitions: list[TopicPartition]) -> None:
            self.events.append((kind, sorted(tp.partition for tp in partitions), time.monotonic()))
        return callback

    def poll(self, timeout: float = 0.05) -> None:
        message = self.consumer.poll(timeout)
        if message is not None:
            assert message.error() is None, message.error()
            self.messages.append(message)

    def owned(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.consumer.close()


@pytest.fixture
def cf_members() -> Iterator[list[CfMember]]:
    started: list[CfMember] = []
    yield started
    for member in started:
        member.close()


def poll_until(members: list[CfMember], check: Callable[[], Any], what: str, timeout: float = SETTLE) -> Any:
    """Polls every member until check() is truthy; fails the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for member in members:
            member.poll(0.05)
        result = check()
        if result:
            return result
    events = [m.events for m in members]
    owned = [sorted(m.owned()) for m in members]
    pytest.fail(f"{what} did not happen within {timeout:.0f} s; events {events}; assignments {owned}", pytrace=False)


def cf_consume(member: CfMember, expect: int, linger: float = 0.0) -> list[int]:
    """Polls until `expect` records arrived, then for `linger` more seconds; returns the record numbers."""
    poll_until([member], lambda: len(member.messages) >= expect, f"{expect} records")
    end = time.monotonic() + linger
    while time.monotonic() < end:
        member.poll(0.1)
    return [index(m.value()) for m in member.messages]


def test_confluent_first_join_time(broker: Any, cf_members: list[CfMember]) -> None:
    topic = unique_topic("cfg-join")
    create_topic(broker, topic, 2)
    member = CfMember(broker, topic, unique_topic("cfg-join-group"))
    cf_members.append(member)
    poll_until([member], lambda: member.events, "first assignment", timeout=20)
    kind, partitions, at = member.events[0]
    assert (kind, partitions) == ("assign", [0, 1])
    seconds = at - member.created_at  # from Consumer(), which starts bootstrapping
    report_first_join("confluent-kafka", seconds, from_subscribe_s=round(at - member.subscribed_at, 3))
    assert seconds < 10


def test_confluent_commit_close_restart_resumes(broker: Any, cf_members: list[CfMember]) -> None:
    topic = unique_topic("cfg-resume")
    group = unique_topic("cfg-resume-group")
    create_topic(broker, topic, 3)
    produce(broker, topic, 0, 30, 3, keyed=True)

    first = CfMember(broker, topic, group)
    cf_members.append(first)
    assert sorted(cf_consume(first, 30, linger=0.5)) == list(range(30))
    committed = first.consumer.commit(asynchronous=False)
    assert sorted((tp.partition, tp.offset) for tp in committed) == [(0, 10), (1, 10), (2, 10)]
    fetched = first.consumer.committed([TopicPartition(topic, p) for p in range(3)], timeout=10)
    assert sorted((tp.partition, tp.offset, tp.error) for tp in fetched) == [(0, 10, None), (1, 10, None),
                                                                             (2, 10, None)]
    first.close()

    produce(broker, topic, 30, 21, 3, keyed=True)
    second = CfMember(broker, topic, group)
    cf_members.append(second)
    got = cf_consume(second, 21, linger=1.5)
    assert sorted(got) == list(range(30, 51)), f"expected exactly records 30..50 once, got {sorted(got)}"
    assert all(m.offset() >= 10 for m in second.messages)
    second.consumer.commit(asynchronous=False)
    second.close()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})  # keep a reference while the future runs
    group_offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(timeout=30)
    assert sorted((tp.partition, tp.offset) for tp in group_offsets.topic_partitions) == [(0, 17), (1, 17), (2, 17)]


def test_confluent_cooperative_sticky_two_members(broker: Any, cf_members: list[CfMember]) -> None:
    """With cooperative-sticky, the first member gives up only 2 of its 4 partitions, never all of them."""
    topic = unique_topic("cfg-coop")
    group = unique_topic("cfg-coop-group")
    create_topic(broker, topic, 4)
    conf = {"partition.assignment.strategy": "cooperative-sticky"}

    a = CfMember(broker, topic, group, **conf)
    cf_members.append(a)
    poll_until([a], lambda: a.owned() == {0, 1, 2, 3}, "a owning all 4 partitions")
    assert a.events == [("assign", [0, 1, 2, 3], a.events[0][2])]

    b = CfMember(broker, topic, group, **conf)
    cf_members.append(b)
    poll_until([a, b], lambda: len(a.owned()) == 2 and len(b.owned()) == 2, "a 2/2 split")
    assert a.owned() | b.owned() == {0, 1, 2, 3}
    # Let any trailing rebalance finish, then check the split held.
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        a.poll(0.05)
        b.poll(0.05)
    assert len(a.owned()) == 2 and len(b.owned()) == 2 and not a.owned() & b.owned()

    a_revokes = [parts for kind, parts, _ in a.events if kind == "revoke" and parts]
    assert a_revokes == [sorted(b.owned())], f"a should incrementally revoke exactly b's partitions: {a.events}"
    assert not [e for e in a.events + b.events if e[0] == "lost"]
    b_assigned = sorted(p for kind, parts, _ in b.events if kind == "assign" for p in parts)
    assert b_assigned == sorted(b.owned()), b.events
    assert not [e for e in b.events if e[0] == "revoke"], b.events

    b.close()
    poll_until([a], lambda: a.owned() == {0, 1, 2, 3}, "a owning all 4 partitions after b left")
    assert [parts for kind, parts, _ in a.events if kind == "revoke" and parts] == a_revokes, \
        f"a should not revoke anything when b leaves: {a.events}"


@pytest.mark.parametrize("restart", ["follower", "leader"])
def test_confluent_static_member_rejoins_without_rebalance(broker: Any, cf_members: list[CfMember],
                                                           restart: str) -> None:
    """A static member that restarts (no LeaveGroup) gets its old partitions back; the other member sees nothing.

    The first member to join is the group leader; Kafka skips the rebalance for a returning static leader too
    (JoinGroup < v9: it answers with the current generation and the old leader id, so the member does not assign).
    """
    topic = unique_topic("cfg-static")
    group = unique_topic("cfg-static-group")
    create_topic(broker, topic, 4)

    def static(instance: str) -> CfMember:
        member = CfMember(broker, topic, group, **{"group.instance.id": instance, "session.timeout.ms": 10000})
        cf_members.append(member)
        return member

    leader = static("static-leader")
    poll_until([leader], lambda: leader.owned() == {0, 1, 2, 3}, "the leader owning all 4 partitions")
    follower = static("static-follower")
    poll_until([leader, follower], lambda: len(leader.owned()) == 2 and len(follower.owned()) == 2, "a 2/2 split")
    gone, stays = (leader, follower) if restart == "leader" else (follower, leader)
    gone_parts, stays_parts = gone.owned(), stays.owned()
    before = describe_group(broker, group)
    assert before.state.name == "STABLE", before.state
    old_ids = {m.group_instance_id: m.member_id for m in before.members}
    assert set(old_ids) == {"static-leader", "static-follower"}
    stays_events = list(stays.events)

    gone.close()  # a static member does not send LeaveGroup
    during = describe_group(broker, group)
    assert len(during.members) == 2, "the closed static member stays until its session times out"

    instance = f"static-{restart}"
    back = static(instance)
    poll_until([back, stays], lambda: back.owned(), "the restarted static member's assignment")
    end = time.monotonic() + 2.0  # several heartbeat intervals: the other member would learn of any rebalance
    while time.monotonic() < end:
        back.poll(0.05)
        stays.poll(0.05)
    assert stays.events == stays_events, f"the other member saw a rebalance: {stays.events[len(stays_events):]}"
    assert back.owned() == gone_parts, f"rejoined with {back.owned()}, had {gone_parts}; events {back.events}"
    assert stays.owned() == stays_parts
    assert [kind for kind, _, _ in back.events] == ["assign"], back.events

    after = describe_group(broker, group)
    assert after.state.name == "STABLE", after.state
    by_instance = {m.group_instance_id: m for m in after.members}
    assert set(by_instance) == {"static-leader", "static-follower"}
    other = "static-follower" if restart == "leader" else "static-leader"
    assert by_instance[other].member_id == old_ids[other]
    assert by_instance[instance].member_id != old_ids[instance], "a rejoining static member gets a new member id"
    assert by_instance[instance].member_id == back.consumer.memberid()
    assert member_partitions(by_instance[instance]) == sorted(gone_parts)
    assert member_partitions(by_instance[other]) == sorted(stays_parts)


# -- kafka-python -------------------------------------------------------------------------------------------

class KpListener(KpRebalanceListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, list[int], float]] = []
        self.lock = threading.Lock()

    def on_partitions_revoked(self, revoked: Any) -> None:
        with self.lock:
            self.events.append(("revoke", sorted(tp.partition for tp in revoked), time.monotonic()))

    def on_partitions_assigned(self, assigned: Any) -> None:
        with self.lock:
            self.events.append(("assign", sorted(tp.partition for tp in assigned), time.monotonic()))

    def on_partitions_lost(self, lost: Any) -> None:
        with self.lock:
            self.events.append(("lost", sorted(tp.partition for tp in lost), time.monotonic()))

    def snapshot(self) -> list[tuple[str, list[int], float]]:
        with self.lock:
            return list(self.events)


# kafka-python 3.0.12 drops a SyncGroup answer that arrives after poll() has timed out in the middle of a
# join (the member then never applies its assignment); polls long enough to cover a join avoid that client race.
KP_POLL_MS = 500


class KpMember:
    def __init__(self, broker: Any, topic: str, group: str, **config: Any) -> None:
        self.created_at = time.monotonic()
        self.consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id=group,
                                      auto_offset_reset="earliest", enable_auto_commit=False,
                                      heartbeat_interval_ms=300, request_timeout_ms=30000, **config)
        self.listener = KpListener()
        self.records: list[Any] = []
        self.closed = False
        self.subscribed_at = time.monotonic()
        self.consumer.subscribe([topic], listener=self.listener)

    def poll(self, timeout_ms: int = KP_POLL_MS) -> None:
        for batch in self.consumer.poll(timeout_ms=timeout_ms).values():
            self.records.extend(batch)

    def owned(self) -> set[int]:
        return {tp.partition for tp in self.consumer.assignment()}

    def generation(self) -> int:
        return self.consumer.group_metadata().generation_id

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.consumer.close(autocommit=False)


@pytest.fixture
def kp_members() -> Iterator[list[KpMember]]:
    started: list[KpMember] = []
    yield started
    for member in started:
        member.close()


def kp_poll_until(members: list[KpMember], check: Callable[[], Any], what: str, timeout: float = SETTLE) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for member in members:
            member.poll()
        result = check()
        if result:
            return result
    events = [m.listener.snapshot() for m in members]
    pytest.fail(f"{what} did not happen within {timeout:.0f} s; events {events}", pytrace=False)


def kp_consume(member: KpMember, expect: int, linger: float = 0.0) -> list[int]:
    kp_poll_until([member], lambda: len(member.records) >= expect, f"{expect} records")
    end = time.monotonic() + linger
    while time.monotonic() < end:
        member.poll(100)
    return [index(r.value) for r in member.records]


def test_kafka_python_first_join_time(broker: Any, kp_members: list[KpMember]) -> None:
    topic = unique_topic("kpg-join")
    create_topic(broker, topic, 2)
    member = KpMember(broker, topic, unique_topic("kpg-join-group"))
    kp_members.append(member)
    kp_poll_until([member], lambda: member.owned() == {0, 1}, "first assignment of both partitions", timeout=20)
    assigns = [(parts, at) for kind, parts, at in member.listener.snapshot() if kind == "assign"]
    first_at = assigns[0][1]
    # kafka-python can complete its first join before it has the topic's metadata: the leader then assigns
    # nothing and rejoins at once. Report both the first assignment callback and the first one with partitions.
    partitions_at = next(at for parts, at in assigns if parts)
    assert assigns[-1][0] == [0, 1]
    seconds = partitions_at - member.created_at  # from KafkaConsumer(), which bootstraps
    report_first_join("kafka-python", seconds, from_subscribe_s=round(partitions_at - member.subscribed_at, 3),
                      first_assign_callback_s=round(first_at - member.created_at, 3), joins=len(assigns),
                      generation=member.generation())
    assert seconds < 10


def test_kafka_python_commit_close_restart_resumes(broker: Any, kp_members: list[KpMember]) -> None:
    topic = unique_topic("kpg-resume")
    group = unique_topic("kpg-resume-group")
    create_topic(broker, topic, 3)
    produce(broker, topic, 0, 30, 3, keyed=True)

    first = KpMember(broker, topic, group)
    kp_members.append(first)
    assert sorted(kp_consume(first, 30, linger=0.5)) == list(range(30))
    first.consumer.commit()
    for p in range(3):
        assert first.consumer.committed(KpTopicPartition(topic, p)) == 10
    first.close()

    produce(broker, topic, 30, 21, 3, keyed=True)
    second = KpMember(broker, topic, group)
    kp_members.append(second)
    got = kp_consume(second, 21, linger=1.5)
    assert sorted(got) == list(range(30, 51)), f"expected exactly records 30..50 once, got {sorted(got)}"
    assert all(r.offset >= 10 for r in second.records)


@pytest.mark.parametrize("restart", ["follower", "leader"])
def test_kafka_python_static_member_rejoins_without_rebalance(broker: Any, kp_members: list[KpMember],
                                                              restart: str) -> None:
    """A restarted static member rejoins at the current generation with its old partitions; no rebalance."""
    topic = unique_topic("kpg-static")
    group = unique_topic("kpg-static-group")
    create_topic(broker, topic, 4)

    def static(instance: str) -> KpMember:
        member = KpMember(broker, topic, group, group_instance_id=instance, session_timeout_ms=10000)
        kp_members.append(member)
        return member

    leader = static("kp-static-leader")
    kp_poll_until([leader], lambda: leader.owned() == {0, 1, 2, 3}, "the leader owning all 4 partitions")
    follower = static("kp-static-follower")

    def settled() -> bool:
        return (len(leader.owned()) == 2 and len(follower.owned()) == 2
                and leader.generation() == follower.generation())

    kp_poll_until([leader, follower], settled, "a 2/2 split")
    # kafka-python may rejoin once more right after its first assignment; wait until the generation holds still.
    generation = leader.generation()
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        leader.poll()
        follower.poll()
        if leader.generation() != generation:
            kp_poll_until([leader, follower], settled, "a 2/2 split")
            generation, end = leader.generation(), time.monotonic() + 1.5
    gone, stays = (leader, follower) if restart == "leader" else (follower, leader)
    gone_parts, stays_parts = gone.owned(), stays.owned()
    stays_events = stays.listener.snapshot()

    gone.close()  # static: no LeaveGroup
    back = static(f"kp-static-{restart}")
    kp_poll_until([back, stays], lambda: back.owned(), "the restarted static member's assignment")
    end = time.monotonic() + 2.0
    while time.monotonic() < end:
        back.poll()
        stays.poll()
    assert stays.listener.snapshot() == stays_events, \
        f"the other member saw a rebalance: {stays.listener.snapshot()[len(stays_events):]}"
    assert stays.generation() == generation, "the group generation changed: a rebalance happened"
    assert back.generation() == generation, "the static member should rejoin the current generation"
    assert back.owned() == gone_parts, f"rejoined with {back.owned()}, had {gone_parts}"
    assert stays.owned() == stays_parts

    after = describe_group(broker, group)
    assert after.state.name == "STABLE"
    assert sorted(m.group_instance_id for m in after.members) == ["kp-static-follower", "kp-static-leader"]


# -- aiokafka -----------------------------------------------------------------------------------------------

class AioListener(AioRebalanceListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, list[int], float]] = []

    def on_partitions_revoked(self, revoked: Any) -> None:
        self.events.append(("revoke", sorted(tp.partition for tp in revoked), time.monotonic()))

    def on_partitions_assigned(self, assigned: Any) -> None:
        self.events.append(("assign", sorted(tp.partition for tp in assigned), time.monotonic()))


async def aio_consume(broker: Any, topic: str, group: str, expect: int, linger: float,
                      commit: bool) -> tuple[list[Any], AioListener, float, float]:
    """Subscribes, reads `expect` records (+ `linger` s), optionally commits.

    Returns the records, the listener, and the times start() and subscribe() were called.
    """
    consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id=group,
                                auto_offset_reset="earliest",
                                enable_auto_commit=False, heartbeat_interval_ms=300)
    listener = AioListener()
    records: list[Any] = []
    started = time.monotonic()
    await consumer.start()
    try:
        subscribed = time.monotonic()
        consumer.subscribe([topic], listener=listener)
        deadline = time.monotonic() + SETTLE
        linger_end = None
        while time.monotonic() < deadline:
            if len(records) >= expect and linger_end is None:
                linger_end = time.monotonic() + linger
            if linger_end is not None and time.monotonic() >= linger_end:
                break
            batches = await consumer.getmany(timeout_ms=100)
            for batch in batches.values():
                records.extend(batch)
        assert len(records) >= expect, f"only {len(records)} of {expect} records; events {listener.events}"
        if commit:
            await consumer.commit()
            for tp in consumer.assignment():
                assert await consumer.committed(tp) == await consumer.position(tp)
    finally:
        await consumer.stop()
    return records, listener, started, subscribed


async def test_aiokafka_first_join_time(broker: Any) -> None:
    topic = unique_topic("aiog-join")
    create_topic(broker, topic, 2)
    produce(broker, topic, 0, 2, 2, keyed=True)
    _, listener, started, subscribed = await aio_consume(broker, topic, unique_topic("aiog-join-group"), 2, 0, False)
    assigns = [(parts, at) for kind, parts, at in listener.events if kind == "assign"]
    assert [parts for parts, _ in assigns] == [[0, 1]], listener.events
    seconds = assigns[0][1] - started  # from start(), which bootstraps; subscribe() comes after it
    report_first_join("aiokafka", seconds, from_subscribe_s=round(assigns[0][1] - subscribed, 3))
    assert seconds < 10


async def test_aiokafka_commit_stop_restart_resumes(broker: Any) -> None:
    topic = unique_topic("aiog-resume")
    group = unique_topic("aiog-resume-group")
    create_topic(broker, topic, 3)
    produce(broker, topic, 0, 30, 3, keyed=True)
    records, *_ = await aio_consume(broker, topic, group, 30, 0.5, True)
    assert sorted(index(r.value) for r in records) == list(range(30))

    produce(broker, topic, 30, 21, 3, keyed=True)
    records, *_ = await aio_consume(broker, topic, group, 21, 1.5, True)
    got = sorted(index(r.value) for r in records)
    assert got == list(range(30, 51)), f"expected exactly records 30..50 once, got {got}"


# -- session expiry of a SIGKILLed member -------------------------------------------------------------------

#: A confluent-kafka group member run as a subprocess: prints {"event": "assign"|"revoke", "partitions": [...]}.
MEMBER_SCRIPT = """
import json, sys
from confluent_kafka import Consumer
bootstrap, topic, group, session_ms = sys.argv[1:5]
consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "session.timeout.ms": int(session_ms),
                     "heartbeat.interval.ms": 300, "enable.auto.commit": False})
def on(kind):
    def callback(_consumer, partitions):
        print(json.dumps({"event": kind, "partitions": sorted(tp.partition for tp in partitions)}), flush=True)
    return callback
consumer.subscribe([topic], on_assign=on("assign"), on_revoke=on("revoke"))
while True:
    consumer.poll(0.1)
"""


class SubprocessMember:
    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", MEMBER_SCRIPT, *args], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.events: list[dict[str, Any]] = []
        self.stderr = ""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.events.append(json.loads(line))

    def owned(self) -> set[int]:
        parts: set[int] = set()
        for e in list(self.events):
            if e["event"] == "assign":
                parts |= set(e["partitions"])
            else:
                parts -= set(e["partitions"])
        return parts

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


def test_session_timeout_expires_killed_member(broker_factory: Any, cf_members: list[CfMember]) -> None:
    """After SIGKILLing one of two members, the survivor gets all partitions once the session timeout passes."""
    fast = broker_factory("group.min.session.timeout.ms=500")
    topic = unique_topic("pyg-expire")
    group = unique_topic("pyg-expire-group")
    create_topic(fast, topic, 4)
    session_ms = 2000

    a = CfMember(fast, topic, group, **{"session.timeout.ms": session_ms})
    cf_members.append(a)
    poll_until([a], lambda: a.owned() == {0, 1, 2, 3}, "a owning all 4 partitions")
    b = SubprocessMember(fast.bootstrap_servers, topic, group, str(session_ms))
    try:
        poll_until([a], lambda: len(a.owned()) == 2 and len(b.owned()) == 2, "a 2/2 split with the subprocess")
        assigns_before = len([e for e in a.events if e[0] == "assign"])
        b.kill()
        killed = time.monotonic()
        poll_until([a], lambda: a.owned() == {0, 1, 2, 3} and len([e for e in a.events if e[0] == "assign"])
                   > assigns_before, "a owning all 4 partitions after b's session expired")
        elapsed = time.monotonic() - killed
    finally:
        b.kill()
    print(json.dumps({"client": "confluent-kafka", "session_timeout_ms": session_ms,
                      "reassigned_after_s": round(elapsed, 3)}))
    assert elapsed >= session_ms / 1000 * 0.5, f"partitions moved {elapsed:.2f} s after the kill, before expiry"
    assert elapsed < session_ms / 1000 + 10


def test_session_timeout_below_broker_minimum_is_refused(broker: Any) -> None:
    """A session.timeout.ms below group.min.session.timeout.ms (6000 by default) fails the join."""
    topic = unique_topic("pyg-badsession")
    create_topic(broker, topic, 1)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": unique_topic("pyg-bad"),
                         "session.timeout.ms": 1000, "heartbeat.interval.ms": 300})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 15
        error = None
        while time.monotonic() < deadline and error is None:
            message = consumer.poll(0.2)
            if message is not None and message.error() is not None:
                error = message.error()
        assert error is not None, "expected the join to fail"
        assert error.name() == "INVALID_SESSION_TIMEOUT", error
    except KafkaException as e:  # pragma: no cover - depends on where librdkafka surfaces the error
        assert e.args[0].name() == "INVALID_SESSION_TIMEOUT", e
    finally:
        consumer.close()
