"""A Kafka Streams 4.x application against a minibroker process (issue 25).

tests/clients/java/v4/WordCountStreams.java, a word count with a repartition (groupBy word), a state store
with its changelog topic, exactly_once_v2 and the classic rebalance protocol, runs as two instances sharing the
work; one is stopped midway and its tasks move to the other. The committed output (read_committed) must be
exactly what a plain count gives: for every word the updates 1, 2, ..., n in order, none lost, none twice.
Streams creates its internal topics through the Admin client as against Kafka, and purges the repartition
topic with DeleteRecords once its records are committed.
"""

from __future__ import annotations

import json
import queue
import random
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from minibroker.testing.process import BrokerProcess, start_broker
from tests.helpers import unique_topic
from tests.integration.clients import JavaClients

pytestmark = [pytest.mark.java, pytest.mark.timeout(900)]

#: Generous bound on each wait: a Streams JVM starts, joins and rebalances slowly on a loaded two-core machine.
WAIT_S = 240.0
WORDS = ("kafka", "streams", "broker", "topic", "partition", "offset", "record", "group", "commit", "state")
ALL_TASKS = {"0_0", "0_1", "1_0", "1_1"}  # two sub-topologies (before and after the repartition) x 2 partitions


class StreamsInstance:
    """One WordCountStreams JVM: its JSON lines collected by a thread; stopped by closing its stdin, or by PID."""

    def __init__(self, java: JavaClients, broker: BrokerProcess, app_id: str, source: str, sink: str,
                 state_dir: Path, protocol: str = "classic") -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self.args = java.command("WordCountStreams", broker.bootstrap_servers, app_id, source, sink, str(state_dir),
                                 protocol)
        self.proc = subprocess.Popen(self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.stderr: list[str] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.lines.put(json.loads(line))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def drain(self) -> list[dict[str, Any]]:
        """Every line printed so far."""
        while True:
            try:
                self.seen.append(self.lines.get_nowait())
            except queue.Empty:
                return self.seen

    def active(self) -> set[str] | None:
        """The active tasks of the latest state change, when it was to RUNNING; else None."""
        states = [line for line in self.drain() if "state" in line]
        if not states or states[-1]["state"] != "RUNNING":
            return None
        return set(states[-1]["active"])

    def describe(self) -> str:
        return (f"{' '.join(self.args[-6:])}\nexit code: {self.proc.poll()}\nstdout: {self.drain()}\n"
                f"stderr (end): {''.join(self.stderr)[-4000:]}")

    def close(self) -> int:
        """Closes stdin (the program closes Streams, leaving the group) and waits for the exit, bounded."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=120)
        JavaClients.finished(self.args)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


def wait_for(what: str, condition: Callable[[], bool], describe: Callable[[], str],
             running: tuple[StreamsInstance, ...] = ()) -> None:
    """Polls `condition` until it holds; fails after WAIT_S, or at once when one of `running` has exited."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if any(instance.proc.poll() is not None for instance in running):
            pytest.fail(f"an instance exited while waiting for {what}\n{describe()}", pytrace=False)
        if time.monotonic() > deadline:
            pytest.fail(f"not within {WAIT_S:.0f} s: {what}\n{describe()}", pytrace=False)
        time.sleep(0.2)


class CommittedOutput:
    """Reads the output topic read_committed from the start; per word, the sequence of counts it saw."""

    def __init__(self, broker: BrokerProcess, topic: str) -> None:
        self.consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": f"{topic}-check",
                                  "auto.offset.reset": "earliest", "enable.auto.commit": False,
                                  "isolation.level": "read_committed"})
        self.consumer.subscribe([topic])
        self.updates: dict[str, list[int]] = {}

    def poll(self) -> dict[str, list[int]]:
        for message in self.consumer.consume(500, 0.2):
            assert message.error() is None, message.error()
            key, value = message.key(), message.value()
            assert key is not None and value is not None
            self.updates.setdefault(key.decode(), []).append(int.from_bytes(value, "big"))
        return self.updates

    def latest(self) -> dict[str, int]:
        return {word: counts[-1] for word, counts in self.poll().items()}

    def close(self) -> None:
        self.consumer.close()


def produce_lines(broker: BrokerProcess, topic: str, lines: list[str]) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True})
    for number, line in enumerate(lines):
        producer.produce(topic, line.encode(), key=str(number).encode())
    assert producer.flush(30) == 0


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerProcess]:
    process = start_broker(timeout=180)  # generous: a loaded machine starts it slowly
    yield process
    process.stop()


def test_word_count_with_exactly_once_v2_survives_an_instance_stopping(broker, java, tmp_path):
    app_id = unique_topic("wordcount")
    source, sink = f"{app_id}-lines", f"{app_id}-counts"
    broker.create_topic(source, partitions=2)
    broker.create_topic(sink, partitions=2)
    rng = random.Random(25)
    first = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))) for _ in range(150)]
    second = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))) for _ in range(150)]
    expected_first = Counter(word for line in first for word in line.split())
    expected_all = expected_first + Counter(word for line in second for word in line.split())

    a = StreamsInstance(java, broker, app_id, source, sink, tmp_path / "a")
    b = StreamsInstance(java, broker, app_id, source, sink, tmp_path / "b")
    output = CommittedOutput(broker, sink)
    try:
        def both() -> str:
            return f"--- instance a ---\n{a.describe()}\n--- instance b ---\n{b.describe()}\n" \
                   f"--- broker log (end) ---\n{broker.log_text()[-4000:]}"

        def shared() -> bool:
            tasks_a, tasks_b = a.active() or set(), b.active() or set()
            return bool(tasks_a) and bool(tasks_b) and tasks_a | tasks_b == ALL_TASKS and not tasks_a & tasks_b

        wait_for("both instances RUNNING, sharing the four tasks", shared, both, (a, b))
        produce_lines(broker, source, first)
        wait_for("the first half counted", lambda: output.latest() == dict(expected_first),
                 lambda: f"output {output.latest()}\nexpected {dict(expected_first)}\n{both()}", (a, b))

        assert b.close() == 0, both()  # its tasks move to a
        wait_for("instance a RUNNING with all four tasks", lambda: a.active() == ALL_TASKS, both, (a,))
        produce_lines(broker, source, second)
        wait_for("every line counted", lambda: output.latest() == dict(expected_all),
                 lambda: f"output {output.latest()}\nexpected {dict(expected_all)}\n{both()}", (a,))
        # exactly once: every committed update of a word is the previous count plus one, from 1
        assert output.poll() == {word: list(range(1, n + 1)) for word, n in expected_all.items()}

        # Streams created its internal topics (Admin createTopics) and purges the repartition topic
        # (Admin deleteRecords) once a commit covers its records
        repartition, changelog = f"{app_id}-words-repartition", f"{app_id}-counts-changelog"
        topics = output.consumer.list_topics(timeout=10).topics
        assert {repartition, changelog} <= set(topics), sorted(topics)

        def purged() -> bool:
            lows = [output.consumer.get_watermark_offsets(TopicPartition(repartition, p), timeout=10)[0]
                    for p in range(2)]
            return sum(lows) > 0

        wait_for("the repartition topic purged (its low watermark above 0)", purged, both)
        assert a.close() == 0, both()
    finally:
        output.close()
        a.kill()
        b.kill()

