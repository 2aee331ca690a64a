"""Transactions through KafkaJS 2.2.4 against a real broker process.

tests/clients/node/txn.js runs transactional producers (producer.transaction(), send, sendOffsets, commit, abort)
and KafkaJS group consumers (read committed by default, or readUncommitted), driven by a JSON command list;
tests/clients/node/txn_copy.js is an exactly-once consume-transform-produce loop (eachBatch + sendOffsets) that can
abort a transaction or exit in the middle of one. Results are also read back with a confluent-kafka consumer.

KafkaJS only asks for a transactional producer id on the first producer.transaction() call (connect() gets a
non-transactional one), so a second producer fences the first at its first transaction() call.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import unique_topic
from tests.integration.clients import ClientRun, run_client
from tests.integration.test_txn_python import create_topics, group_offsets, produce_plain, read_all

pytestmark = pytest.mark.kafkajs

#: KafkaJS's names for the errors by which a newer epoch fences a producer.
FENCED = {"PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"}


def txn(node: Path, broker: Any, *commands: dict[str, Any]) -> list[dict[str, Any]]:
    """Runs txn.js with `commands`; returns one result per command."""
    run = run_client(["node", "txn.js", broker.bootstrap_servers, json.dumps(list(commands))], cwd=node, broker=broker,
                     timeout=90, env={"KAFKAJS_NO_PARTITIONER_WARNING": "1"}).check()
    results = run.lines()
    assert [r["op"] for r in results] == [c["op"] for c in commands], run.describe()
    for result in results:
        result["run"] = run
    return results


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert result["ok"], f"{result['op']} failed: {result.get('error')}: {result.get('message')}\n" + \
        result["run"].describe()
    return result


def error_types(result: dict[str, Any]) -> set[str]:
    """The KafkaJS error types of a failed command, including those of aggregated and retried errors."""
    found = set()
    stack = [result]
    while stack:
        item = stack.pop()
        if item.get("type"):
            found.add(item["type"])
        stack += item.get("errors", [])
    return found


def fenced(result: dict[str, Any]) -> None:
    assert not result["ok"] and error_types(result) & FENCED, \
        f"{result['op']}: expected one of {sorted(FENCED)}, got {result}\n{result['run'].describe()}"


def numbers(vals: list[str]) -> list[int]:
    return sorted(int(v.split("-")[1]) for v in vals)


def test_kafkajs_commit_and_abort(node: Path, broker: Any) -> None:
    """Commit 9 records, abort 6 (acknowledged by the broker): read committed sees the 9, uncommitted all 15."""
    topic = unique_topic("jst-commit")
    create_topics(broker, topic)
    results = txn(node, broker,
                  {"op": "producer", "name": "p", "txn": unique_topic("jst-commit-txn")},
                  {"op": "begin", "name": "p"},
                  {"op": "send", "name": "p", "topic": topic, "from": 0, "count": 9, "partitions": 3},
                  {"op": "commit", "name": "p"},
                  {"op": "begin", "name": "p"},
                  {"op": "send", "name": "p", "topic": topic, "from": 9, "count": 6, "partitions": 3},
                  {"op": "abort", "name": "p"},
                  {"op": "consume", "topic": topic, "expect": 9},
                  {"op": "consume", "topic": topic, "expect": 15, "readUncommitted": True})
    for result in results:
        ok(result)
    aborted_send = results[5]
    assert all(o["error_code"] == 0 for o in aborted_send["offsets"]), aborted_send
    assert numbers(results[7]["values"]) == list(range(9)), results[7]["run"].describe()
    assert numbers(results[8]["values"]) == list(range(15)), results[8]["run"].describe()
    assert numbers([m.value().decode() for m in read_all(broker, topic, "read_committed")]) == list(range(9))


def test_kafkajs_fencing(node: Path, broker: Any) -> None:
    """A second producer's first transaction() fences the first producer and aborts its open transaction."""
    topic = unique_topic("jst-fence")
    txn_id = unique_topic("jst-fence-txn")
    create_topics(broker, topic)
    results = txn(node, broker,
                  {"op": "producer", "name": "a", "txn": txn_id},
                  {"op": "begin", "name": "a"},
                  {"op": "send", "name": "a", "topic": topic, "from": 0, "count": 4, "partitions": 3},
                  {"op": "producer", "name": "b", "txn": txn_id},
                  {"op": "begin", "name": "b"},
                  {"op": "send", "name": "a", "topic": topic, "from": 4, "count": 2, "partitions": 3},
                  {"op": "commit", "name": "a"},
                  {"op": "send", "name": "b", "topic": topic, "from": 100, "count": 3, "partitions": 3},
                  {"op": "commit", "name": "b"},
                  {"op": "consume", "topic": topic, "expect": 3})
    for result in results[:5]:
        ok(result)
    fenced(results[5])
    fenced(results[6])
    ok(results[7])
    ok(results[8])
    assert numbers(ok(results[9])["values"]) == [100, 101, 102], results[9]["run"].describe()
    assert numbers([m.value().decode() for m in read_all(broker, topic, "read_committed")]) == [100, 101, 102]


def test_kafkajs_send_offsets_visible_on_commit_only(node: Path, broker: Any) -> None:
    """transaction.sendOffsets: offsets of an aborted transaction are dropped, those of a committed one stick."""
    topic = unique_topic("jst-offsets")
    group = unique_topic("jst-offsets-group")
    create_topics(broker, topic)
    produce_plain(broker, topic, 30)
    results = txn(node, broker,
                  {"op": "producer", "name": "p", "txn": unique_topic("jst-offsets-txn")},
                  {"op": "begin", "name": "p"},
                  {"op": "sendOffsets", "name": "p", "group": group, "topic": topic, "offsets": {"0": 5, "1": 6}},
                  {"op": "abort", "name": "p"},
                  {"op": "groupOffsets", "group": group, "topic": topic},
                  {"op": "begin", "name": "p"},
                  {"op": "sendOffsets", "name": "p", "group": group, "topic": topic, "offsets": {"0": 7, "2": 3}},
                  {"op": "commit", "name": "p"},
                  {"op": "groupOffsets", "group": group, "topic": topic})
    for result in results:
        ok(result)
    assert results[4]["offsets"] == {"0": -1, "1": -1, "2": -1}, results[4]
    assert results[8]["offsets"] == {"0": 7, "1": -1, "2": 3}, results[8]
    assert group_offsets(broker, group) == {0: 7, 2: 3}


def copy(node: Path, broker: Any, *args: object) -> tuple[list[dict[str, Any]], ClientRun]:
    run = run_client(["node", "txn_copy.js", broker.bootstrap_servers, *(str(a) for a in args)], cwd=node,
                     broker=broker,
                     timeout=90, env={"KAFKAJS_NO_PARTITIONER_WARNING": "1"})
    return run.lines(), run


def test_kafkajs_consume_transform_produce(node: Path, broker: Any) -> None:
    """eachBatch + transaction.sendOffsets copies 45 records; the first run aborts its 2nd transaction and exits in
    the middle of its 4th (records and offsets sent); the restarted process finishes the job exactly once."""
    source, sink = unique_topic("jst-eos-in"), unique_topic("jst-eos-out")
    group, txn_id = unique_topic("jst-eos-group"), unique_topic("jst-eos-txn")
    total = 45
    create_topics(broker, source, sink)
    produce_plain(broker, source, total)

    events, run = copy(node, broker, source, sink, group, txn_id, total, 2, 4)
    assert run.returncode == 3, run.describe()
    kinds = [e.get("event") for e in events]
    assert kinds[-1] == "dying" and kinds.count("aborted") == 1 and kinds.count("committed") == 2, run.describe()

    started = time.monotonic()
    events, run = copy(node, broker, source, sink, group, txn_id, total, -1, -1, 60000)
    run.check()
    print(f"restarted copier finished in {time.monotonic() - started:.1f} s")
    (done,) = [e for e in events if e.get("done")]
    assert done["committed"] == {"0": 15, "1": 15, "2": 15}, run.describe()

    committed = read_all(broker, sink, "read_committed")
    copies = Counter(m.key().decode() for m in committed)
    assert sorted(copies) == sorted(f"{p}:{o}" for p in range(3) for o in range(15))
    assert set(copies.values()) == {1}, f"duplicated: {sorted(k for k, n in copies.items() if n > 1)}"
    assert sorted(m.value().decode() for m in committed) == sorted(f"copy-v-{i}" for i in range(total))
    assert len(read_all(broker, sink, "read_uncommitted")) > total  # the aborted and abandoned copies
    assert group_offsets(broker, group) == {0: 15, 1: 15, 2: 15}
