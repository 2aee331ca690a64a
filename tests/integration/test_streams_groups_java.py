"""Kafka Streams 4.3 with `group.protocol=streams` (KIP-1071) against a minibroker process (issue 26).

The word count of test_streams_java.py (a repartition, a state store with its changelog, exactly_once_v2) runs
as two instances of a streams group: the broker validates the topology, creates the internal topics itself
(the members do not), and assigns the four tasks; `kafka-streams-groups` lists the group and describes its two
members with their tasks. One instance is stopped, its tasks move to the other, and it is started again and gets
its share back. The committed output must be exactly a plain count: for every word the updates 1, 2, ..., n in
order, none lost, none twice. Once both have left, the tool deletes the group's input offsets and the group.
"""

from __future__ import annotations

import random
import subprocess
from collections import Counter
from collections.abc import Iterator

import pytest

from minibroker.testing.process import BrokerProcess, start_broker
from tests.helpers import unique_topic
from tests.integration.test_streams_java import (
    ALL_TASKS,
    WORDS,
    CommittedOutput,
    StreamsInstance,
    produce_lines,
    wait_for,
)
from tests.reference.launcher import ReferenceUnavailable, jar_dir

pytestmark = [pytest.mark.java, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerProcess]:
    # no initial rebalance delay, as the test brokers' classic groups (TEST_BROKER_CONFIG)
    process = start_broker("group.streams.initial.rebalance.delay.ms=0", timeout=180)
    yield process
    process.stop()


def streams_groups_tool(broker: BrokerProcess, *args: str) -> str:
    """`kafka-streams-groups` (Kafka 4.3.1's StreamsGroupCommand) against `broker`: its standard output."""
    try:
        jars = jar_dir()
    except ReferenceUnavailable as exc:
        pytest.skip(str(exc))
    ran = subprocess.run(["java", "-cp", f"{jars}/*", "org.apache.kafka.tools.streams.StreamsGroupCommand",
                          "--bootstrap-server", broker.bootstrap_servers, *args],
                         capture_output=True, text=True, timeout=180)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return ran.stdout


def _lines(rng: random.Random, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))) for _ in range(n)]


def test_word_count_in_a_streams_group_survives_an_instance_stopping_and_restarting(broker, java, tmp_path):
    app_id = unique_topic("wordcount-streams")
    source, sink = f"{app_id}-lines", f"{app_id}-counts"
    broker.create_topic(source, partitions=2)
    broker.create_topic(sink, partitions=2)
    rng = random.Random(26)
    batches = [_lines(rng, 100) for _ in range(3)]
    expected = [Counter(word for batch in batches[:i + 1] for line in batch for word in line.split())
                for i in range(3)]

    def start(name: str) -> StreamsInstance:
        return StreamsInstance(java, broker, app_id, source, sink, tmp_path / name, protocol="streams")

    a, b = start("a"), start("b")
    instances = [a, b]
    output = CommittedOutput(broker, sink)
    try:
        def everything() -> str:
            return "\n".join(f"--- instance {i} ---\n{inst.describe()}" for i, inst in enumerate(instances)) + \
                f"\n--- broker log (end) ---\n{broker.log_text()[-4000:]}"

        def shared(x: StreamsInstance, y: StreamsInstance) -> bool:
            tasks_x, tasks_y = x.active() or set(), y.active() or set()
            return bool(tasks_x) and bool(tasks_y) and tasks_x | tasks_y == ALL_TASKS and not tasks_x & tasks_y

        wait_for("both instances RUNNING, sharing the four tasks", lambda: shared(a, b), everything, (a, b))
        # the broker created the internal topics the topology declares
        topics = output.consumer.list_topics(timeout=10).topics
        assert {f"{app_id}-words-repartition", f"{app_id}-counts-changelog"} <= set(topics), sorted(topics)
        # kafka-streams-groups lists the group and describes its members with their tasks
        assert app_id in streams_groups_tool(broker, "--list").split()
        members = streams_groups_tool(broker, "--describe", "--group", app_id, "--members", "--verbose")
        rows = [line for line in members.splitlines() if line.startswith(app_id)]
        assert len(rows) == 2 and all(" streams " in row and "ACTIVE:" in row for row in rows), members
        produce_lines(broker, source, batches[0])
        wait_for("the first batch counted", lambda: output.latest() == dict(expected[0]),
                 lambda: f"output {output.latest()}\nexpected {dict(expected[0])}\n{everything()}", (a, b))

        assert b.close() == 0, everything()  # it leaves the group: its tasks move to a
        wait_for("instance a RUNNING with all four tasks", lambda: a.active() == ALL_TASKS, everything, (a,))
        produce_lines(broker, source, batches[1])
        wait_for("the second batch counted", lambda: output.latest() == dict(expected[1]),
                 lambda: f"output {output.latest()}\nexpected {dict(expected[1])}\n{everything()}", (a,))

        b = start("b")  # the same state directory, a new member
        instances.append(b)
        wait_for("the restarted instance sharing the four tasks again", lambda: shared(a, b), everything, (a, b))
        produce_lines(broker, source, batches[2])
        wait_for("every batch counted", lambda: output.latest() == dict(expected[2]),
                 lambda: f"output {output.latest()}\nexpected {dict(expected[2])}\n{everything()}", (a, b))
        # exactly once: every committed update of a word is the previous count plus one, from 1
        assert output.poll() == {word: list(range(1, n + 1)) for word, n in expected[2].items()}
        assert a.close() == 0, everything()
        assert b.close() == 0, everything()
        # the group is empty now: kafka-streams-groups deletes its offsets of the input topic, then the group
        deleted = streams_groups_tool(broker, "--delete-offsets", "--group", app_id, "--input-topic", source)
        assert [line.split() for line in deleted.splitlines() if line.startswith(source)] == [
            [source, "0", "Successful"], [source, "1", "Successful"]], deleted
        assert "was successful" in streams_groups_tool(broker, "--delete", "--group", app_id)
        assert app_id not in streams_groups_tool(broker, "--list").split()
    finally:
        output.close()
        for instance in instances:
            instance.kill()
