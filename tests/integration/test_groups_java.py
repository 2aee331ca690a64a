"""Consumer groups (the classic protocol) through the Apache Kafka Java client (kafka-clients 4.3.1) against a
real broker process.

The programs are tests/clients/java/GroupConsumer.java (a subscribed KafkaConsumer printing its rebalance
events and records as JSON lines, one-shot or driven through stdin) and GroupAdmin.java (Admin group APIs).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.helpers import unique_topic
from tests.integration.clients import ClientRun, JavaClients, ok
from tests.integration.groups_common import report_first_join

pytestmark = pytest.mark.java

#: Consumer settings that make rebalances quick to notice: a member learns of a rebalance on its next heartbeat.
FAST = ("heartbeat.interval.ms=300",)


def admin(java: JavaClients, broker: Any, *commands: str) -> list[dict[str, Any]]:
    """Runs GroupAdmin; returns one result per command."""
    return java.scenario(broker, "GroupAdmin", commands, timeout=90)


def failed_with(result: dict[str, Any], error: str) -> None:
    """Asserts a GroupAdmin command failed with the Java exception `error`."""
    assert (result["ok"], result.get("error")) == (False, error), \
        f"{result['cmd']!r}: expected {error}, got {result}\n{result['run'].describe()}"


def consume_once(java: JavaClients, broker: Any, topic: str, group: str, *options: str) -> tuple[list[dict], ClientRun]:
    """Runs GroupConsumer in one-shot mode; returns its events and the run."""
    run = java.run(broker, "GroupConsumer", topic, group, *options, timeout=90).check()
    events = run.lines()
    assert events[-1].get("done") and not events[-1]["timed_out"], run.describe()
    return events, run


def records(events: list[dict]) -> list[dict]:
    return [e for e in events if e.get("event") == "record"]


class Member:
    """A GroupConsumer in interactive mode, run in the background; its JSON events are collected as they arrive."""

    def __init__(self, java: JavaClients, broker: Any, topic: str, group: str, *options: str, name: str = "") -> None:
        self.name = name
        self.broker = broker
        self.args = args = java.command("GroupConsumer", broker.bootstrap_servers, topic, group, "interactive=true",
                                        *options)
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.events: list[dict[str, Any]] = []
        self.stderr: list[str] = []
        self._cond = threading.Condition()
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self._threads:
            t.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.strip()
            if line.startswith("{"):
                with self._cond:
                    self.events.append(json.loads(line))
                    self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)
            del self.stderr[:-200]

    def describe(self) -> str:
        with self._cond:
            events = "\n".join(json.dumps(e) for e in self.events[-60:])
        return (f"--- member {self.name} (exit {self.proc.poll()}) events (end) ---\n{events}\n"
                f"--- member {self.name} stderr (end) ---\n{''.join(self.stderr)[-4000:]}\n"
                f"--- broker log (end) ---\n{self.broker.log_text()[-4000:]}")

    def wait(self, check: Callable[[list[dict[str, Any]]], Any], what: str, timeout: float = 60.0) -> Any:
        """Waits until check(events) is truthy; returns it. Fails the test after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                result = check(self.events)
                if result:
                    return result
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (self.proc.poll() is not None and not self._threads[0].is_alive()):
                    break
                self._cond.wait(min(remaining, 0.5))
        pytest.fail(f"member {self.name}: {what} did not happen within {timeout:.0f} s\n{self.describe()}",
                    pytrace=False)

    def owned(self) -> set[int]:
        """The partitions owned after the events so far (assigned adds, revoked and lost remove)."""
        return owned(self.events)

    def send(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def close(self, timeout: float = 30.0) -> None:
        """Asks the consumer to close() (leaving the group) and waits for the process to exit 0."""
        self.send("close")
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"member {self.name} did not close within {timeout:.0f} s\n{self.describe()}", pytrace=False)
        self._threads[0].join(5)
        JavaClients.finished(self.args)
        assert code == 0, self.describe()

    def kill(self) -> None:
        """SIGKILL: the member vanishes without leaving the group."""
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def owned(events: list[dict[str, Any]]) -> set[int]:
    parts: set[int] = set()
    for e in events:
        if e.get("event") == "assigned":
            parts |= set(e["partitions"])
        elif e.get("event") in ("revoked", "lost"):
            parts -= set(e["partitions"])
    return parts


def kinds(events: list[dict[str, Any]], *names: str) -> list[dict[str, Any]]:
    return [e for e in events if e.get("event") in names]


@pytest.fixture
def members() -> Iterator[list[Member]]:
    """Members started by a test; any still running afterwards is killed."""
    started: list[Member] = []
    yield started
    for member in started:
        member.stop()


def test_first_join_time(java: JavaClients, broker: Any) -> None:
    """A single consumer's time from subscribe() to its first assignment (printed and stored, not asserted tightly)."""
    topic = unique_topic("jg-join")
    group = unique_topic("jg-join-group")
    ok(admin(java, broker, f"create {topic} 2", f"produce {topic} 0 4 2")[1])
    events, run = consume_once(java, broker, topic, group, "expect=4")
    (assigned,) = kinds(events, "assigned")
    assert assigned["partitions"] == [0, 1], run.describe()
    assert assigned["generation"] >= 1, run.describe()
    assert assigned["member_id"], run.describe()
    assert sorted(r["i"] for r in records(events)) == [0, 1, 2, 3]
    seconds = assigned["ms"] / 1000
    report_first_join("java", seconds, generation=assigned["generation"])
    # a bound far above a quick join (under load the 4.3 client took 10.4 s here, and 10.5 s against Kafka 4.3.1 with
    # its 3 s initial rebalance delay) and below a join that waited half of the 45 s session timeout
    assert seconds < 20, f"first join took {seconds:.1f} s\n{run.describe()}"


def test_consume_commit_restart_resumes(java: JavaClients, broker: Any) -> None:
    """Consume N records and commitSync; a new consumer in the group resumes from the committed offsets."""
    topic = unique_topic("jg-resume")
    group = unique_topic("jg-resume-group")
    create, produce = admin(java, broker, f"create {topic} 3", f"produce {topic} 0 30 3")
    ok(create)
    ok(produce)

    events, run = consume_once(java, broker, topic, group, "expect=30", "linger.ms=500", "commit=true")
    got = [r["i"] for r in records(events)]
    assert sorted(got) == list(range(30)), run.describe()
    (committed,) = kinds(events, "committed")
    assert committed["offsets"] == {"0": 10, "1": 10, "2": 10}, run.describe()
    assert kinds(events, "closed"), run.describe()

    (offsets,) = admin(java, broker, f"group-offsets {group}")
    assert ok(offsets)["offsets"] == {f"{topic}:0": 10, f"{topic}:1": 10, f"{topic}:2": 10}

    ok(admin(java, broker, f"produce {topic} 30 21 3")[0])
    events, run = consume_once(java, broker, topic, group, "expect=21", "linger.ms=1500", "commit=true")
    got = [r["i"] for r in records(events)]
    assert sorted(got) == list(range(30, 51)), f"expected exactly records 30..50 once\n{run.describe()}"
    assert all(r["offset"] >= 10 for r in records(events)), run.describe()
    (committed,) = kinds(events, "committed")
    assert committed["offsets"] == {"0": 17, "1": 17, "2": 17}, run.describe()


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_two_members_rebalance_on_join_and_leave(java: JavaClients, broker: Any, members: list[Member],
                                                 strategy: str) -> None:
    """A second member splits a 4-partition topic 2/2 with the first; when it closes, the first owns all 4.

    range is eager (the first member revokes everything, then gets 2 back); cooperative-sticky is incremental
    (the first member only revokes the 2 partitions that move, over two rebalances).
    """
    topic = unique_topic("jg-rebal")
    group = unique_topic("jg-rebal-group")
    ok(admin(java, broker, f"create {topic} 4")[0])
    assignor = {"range": "org.apache.kafka.clients.consumer.RangeAssignor",
                "cooperative-sticky": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"}[strategy]
    opts = (*FAST, f"partition.assignment.strategy={assignor}")

    a = Member(java, broker, topic, group, *opts, name="a")
    members.append(a)
    a.wait(lambda ev: owned(ev) == {0, 1, 2, 3}, "member a owning all 4 partitions")
    gen1 = kinds(a.events, "assigned")[-1]["generation"]

    b = Member(java, broker, topic, group, *opts, name="b")
    members.append(b)
    b.wait(lambda ev: len(owned(ev)) == 2, "member b owning 2 partitions")
    a.wait(lambda ev: len(owned(ev)) == 2, "member a down to 2 partitions")
    # both members report the same, final generation
    a.wait(lambda ev: kinds(ev, "assigned")[-1]["generation"] == kinds(b.events, "assigned")[-1]["generation"],
           "a and b in the same generation")
    assert a.owned() | b.owned() == {0, 1, 2, 3} and not a.owned() & b.owned(), a.describe() + b.describe()
    revoked = [e["partitions"] for e in kinds(a.events, "revoked")]
    if strategy == "range":
        assert [0, 1, 2, 3] in revoked, "eager rebalance: a first revokes all it owns\n" + a.describe()
    else:
        assert [p for p in revoked if p] == [sorted(b.owned())], \
            "cooperative rebalance: a revokes only the partitions moving to b\n" + a.describe()
    assert not kinds(b.events, "revoked") or all(not e["partitions"] for e in kinds(b.events, "revoked")), \
        b.describe()
    gen2 = kinds(a.events, "assigned")[-1]["generation"]
    assert gen2 > gen1, a.describe()
    assert kinds(a.events, "assigned")[-1]["member_id"] != kinds(b.events, "assigned")[-1]["member_id"]
    revokes_before_leave = len([e for e in kinds(a.events, "revoked") if e["partitions"]])

    b.close()
    a.wait(lambda ev: owned(ev) == {0, 1, 2, 3}, "member a owning all 4 partitions after b left")
    gen3 = kinds(a.events, "assigned")[-1]["generation"]
    assert gen3 > gen2, a.describe()
    assert not kinds(a.events, "lost"), a.describe()
    if strategy == "cooperative-sticky":
        assert len([e for e in kinds(a.events, "revoked") if e["partitions"]]) == revokes_before_leave, \
            "cooperative: a keeps its partitions when b leaves\n" + a.describe()
    a.close()


@pytest.mark.parametrize("restart", ["follower", "leader"])
def test_static_member_restart_without_rebalance(java: JavaClients, broker: Any, members: list[Member],
                                                 restart: str) -> None:
    """KIP-345: a static member (group.instance.id) closes without leaving; restarted, it gets its partitions
    back in the same generation and the other member sees no rebalance. kafka-clients 4.3 uses JoinGroup v9,
    so a returning leader is told to skip the assignment (KIP-814)."""
    topic = unique_topic("jg-static")
    group = unique_topic("jg-static-group")
    ok(admin(java, broker, f"create {topic} 4")[0])

    def static(instance: str) -> Member:
        # Kafka's default 45 s session: the restarted member's JVM must start and rejoin within it, and under
        # make test's load a 10 s session expired first (the group then rebalanced twice, to generation 4).
        member = Member(java, broker, topic, group, *FAST, f"group.instance.id={instance}",
                        "session.timeout.ms=45000", name=instance)
        members.append(member)
        return member

    leader = static("leader")
    leader.wait(lambda ev: owned(ev) == {0, 1, 2, 3}, "the leader owning all 4 partitions")
    follower = static("follower")
    follower.wait(lambda ev: len(owned(ev)) == 2, "the follower owning 2 partitions")
    leader.wait(lambda ev: len(owned(ev)) == 2, "the leader down to 2 partitions")
    leader.wait(lambda ev: kinds(ev, "assigned")[-1]["generation"] ==
                kinds(follower.events, "assigned")[-1]["generation"], "both in the same generation")
    generation = kinds(follower.events, "assigned")[-1]["generation"]
    gone, stays = (leader, follower) if restart == "leader" else (follower, leader)
    gone_parts, stays_parts = gone.owned(), stays.owned()
    old_member_id = kinds(gone.events, "assigned")[-1]["member_id"]

    gone.close()  # a static member does not send LeaveGroup
    seen = len(stays.events)
    (described,) = admin(java, broker, f"describe-group {group}")
    assert len(ok(described)["members"]) == 2, "the closed static member stays until its session times out"

    back = static(restart)
    back.wait(lambda ev: kinds(ev, "assigned"), "the restarted member's assignment")
    time.sleep(1.5)  # several heartbeat intervals: the other member would learn of any rebalance
    assert kinds(back.events, "assigned")[0]["partitions"] == sorted(gone_parts), back.describe()
    assert kinds(back.events, "assigned")[0]["generation"] == generation, back.describe()
    assert kinds(back.events, "assigned")[0]["member_id"] != old_member_id, back.describe()
    assert stays.events[seen:] == [], "the other member saw a rebalance\n" + stays.describe()
    assert stays.owned() == stays_parts

    (described,) = admin(java, broker, f"describe-group {group}")
    desc = ok(described)
    assert desc["state"] == "Stable", desc
    by_instance = {m["instance_id"]: m for m in desc["members"]}
    assert set(by_instance) == {"leader", "follower"}, desc
    assert by_instance[restart]["member_id"] == kinds(back.events, "assigned")[0]["member_id"]
    assert by_instance[restart]["partitions"] == [f"{topic}:{p}" for p in sorted(gone_parts)]
    back.close()
    stays.close()


def test_admin_group_apis(java: JavaClients, broker: Any, members: list[Member]) -> None:
    """describe/list/listOffsets/delete consumer groups, with a live member and after it left."""
    topic = unique_topic("jg-admin")
    group = unique_topic("jg-admin-group")
    create, produce = admin(java, broker, f"create {topic} 2", f"produce {topic} 0 10 2")
    ok(create)
    ok(produce)

    member = Member(java, broker, topic, group, *FAST, name="m")
    members.append(member)
    member.wait(lambda ev: owned(ev) == {0, 1}, "the member owning both partitions")
    member.wait(lambda ev: len(kinds(ev, "record")) >= 10, "10 records")
    member.send("commit")
    member.wait(lambda ev: kinds(ev, "committed"), "commit")
    member_id = kinds(member.events, "assigned")[-1]["member_id"]

    listed, described, offsets, delete, delete_offsets = admin(
        java, broker, "list-groups", f"describe-group {group}", f"group-offsets {group}", f"delete-group {group}",
        f"delete-offsets {group} {topic} 0")
    assert ok(listed)["groups"].get(group) == {"state": "Stable", "simple": False}, listed
    desc = ok(described)
    assert (desc["group_id"], desc["state"], desc["simple"]) == (group, "Stable", False), desc
    assert desc["assignor"] == "range", desc
    assert desc["coordinator"] is not None
    (m,) = desc["members"]
    assert m["member_id"] == member_id
    assert m["client_id"] == "minibroker-java-test"
    assert m["instance_id"] is None
    assert m["partitions"] == [f"{topic}:0", f"{topic}:1"]
    assert ok(offsets)["offsets"] == {f"{topic}:0": 5, f"{topic}:1": 5}
    failed_with(delete, "GroupNotEmptyException")
    failed_with(delete_offsets, "GroupSubscribedToTopicException")

    member.close()

    results = admin(
        java, broker, f"describe-group {group}", "list-groups", f"alter-offsets {group} {topic} 0 2",
        f"group-offsets {group}", f"delete-offsets {group} {topic} 1", f"group-offsets {group}",
        f"delete-group {group}", "list-groups", f"group-offsets {group}", f"describe-group {group}",
        f"delete-group {group}")
    empty, listed, alter, offsets_altered, delete_offsets, offsets_left, delete, listed_after, offsets_after, \
        described_after, delete_again = results
    desc = ok(empty)
    assert (desc["state"], desc["members"]) == ("Empty", []), desc
    assert ok(listed)["groups"].get(group) == {"state": "Empty", "simple": False}, listed
    ok(alter)
    assert ok(offsets_altered)["offsets"] == {f"{topic}:0": 2, f"{topic}:1": 5}
    ok(delete_offsets)
    assert ok(offsets_left)["offsets"] == {f"{topic}:0": 2}
    ok(delete)
    assert group not in ok(listed_after)["groups"]
    assert ok(offsets_after)["offsets"] == {}
    # kafka-clients 4.3 answers a deleted (unknown) group with GroupIdNotFoundException, as it does against Kafka
    # 4.3.1 (3.9 reported it as state DEAD with no members)
    failed_with(described_after, "GroupIdNotFoundException")
    assert described_after["message"] == f"Group {group} not found.", described_after
    failed_with(delete_again, "GroupIdNotFoundException")


def test_session_timeout_expires_killed_member(java: JavaClients, broker_factory: Any, members: list[Member]) -> None:
    """A SIGKILLed member is removed after its session timeout; the survivor then owns every partition."""
    fast = broker_factory("group.min.session.timeout.ms=500")
    topic = unique_topic("jg-expire")
    group = unique_topic("jg-expire-group")
    ok(admin(java, fast, f"create {topic} 4")[0])
    session_ms = 2000
    opts = (f"session.timeout.ms={session_ms}", "heartbeat.interval.ms=300")

    a = Member(java, fast, topic, group, *opts, name="a")
    members.append(a)
    a.wait(lambda ev: owned(ev) == {0, 1, 2, 3}, "member a owning all 4 partitions")
    b = Member(java, fast, topic, group, *opts, name="b")
    members.append(b)
    b.wait(lambda ev: len(owned(ev)) == 2, "member b owning 2 partitions")
    a.wait(lambda ev: len(owned(ev)) == 2, "member a down to 2 partitions")
    assigned_before = len(kinds(a.events, "assigned"))

    b.kill()
    killed = time.monotonic()
    a.wait(lambda ev: len(kinds(ev, "assigned")) > assigned_before and owned(ev) == {0, 1, 2, 3},
           "member a owning all 4 partitions after b's session expired", timeout=30)
    elapsed = time.monotonic() - killed
    print(json.dumps({"client": "java", "session_timeout_ms": session_ms, "reassigned_after_s": round(elapsed, 3)}))
    assert elapsed >= session_ms / 1000 * 0.5, \
        f"b's partitions moved {elapsed:.2f} s after the kill, before its session could expire\n{a.describe()}"
    assert elapsed < session_ms / 1000 + 10, a.describe()
    a.close()
