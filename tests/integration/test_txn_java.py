"""Transactions through the Apache Kafka Java client (kafka-clients 4.3.1) against a real broker process.

The programs are tests/clients/java/TxnScenario.java (transactional producers, read_committed and
read_uncommitted consumers, the transaction Admin APIs, driven by `;`-separated commands) and
tests/clients/java/TxnCopy.java (an exactly-once consume-transform-produce loop that can abort a transaction
or halt its JVM in the middle of one). The broker finalizes `transaction.version` 2 as Kafka 4.x does, so the
4.3 client uses the Transactions V2 paths (KIP-890: partitions join the transaction through Produce and
TxnOffsetCommit, EndTxn v5 bumps the epoch and returns it).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.helpers import unique_topic
from tests.integration.clients import ClientRun, JavaClients, ok

pytestmark = pytest.mark.java

#: The exceptions by which the Java producer reports that a newer epoch fenced it.
FENCED = {"ProducerFencedException", "InvalidProducerEpochException"}


def scenario(java: JavaClients, broker: Any, *commands: str) -> list[dict[str, Any]]:
    """Runs TxnScenario; returns one result per command."""
    return java.scenario(broker, "TxnScenario", commands, timeout=90)


def fenced(result: dict[str, Any]) -> dict[str, Any]:
    """Asserts a TxnScenario command failed with one of Kafka's fencing exceptions."""
    assert not result["ok"] and result["error"] in FENCED, \
        f"{result['cmd']!r}: expected one of {sorted(FENCED)}, got {result}\n{result['run'].describe()}"
    return result


def test_commit_and_abort_read_committed(java: JavaClients, broker: Any) -> None:
    """Commit 12 records, abort 7 (acknowledged by the broker first): read_committed sees 12, read_uncommitted 19."""
    topic = unique_topic("jt-commit")
    txn_id = unique_topic("jt-commit-txn")
    results = scenario(java, broker, f"create {topic} 3", f"producer p {txn_id}", "init p",
                       "begin p", f"send p {topic} 0 12 3", "commit p",
                       "begin p", f"send p {topic} 12 7 3", "abort p",
                       f"consume {topic} 3 read_committed", f"consume {topic} 3 read_uncommitted")
    for result in results[:-2]:
        ok(result)
    committed, uncommitted = ok(results[-2]), ok(results[-1])
    assert sorted(committed["i"]) == list(range(12)), committed["run"].describe()
    assert sorted(uncommitted["i"]) == list(range(19)), uncommitted["run"].describe()
    # each partition holds 4 committed records, a COMMIT marker, 2 or 3 aborted records and an ABORT marker
    assert committed["end"] == uncommitted["end"] == {"0": 9, "1": 8, "2": 8}, committed["run"].describe()


@pytest.mark.parametrize("after_fence", ["send", "commit"])
def test_second_producer_fences_the_first(java: JavaClients, broker: Any, after_fence: str) -> None:
    """A second producer with the same transactional.id fences the first and aborts its open transaction."""
    topic = unique_topic("jt-fence")
    txn_id = unique_topic("jt-fence-txn")
    commands = [f"create {topic} 2", f"producer a {txn_id}", "init a", "begin a", f"send a {topic} 0 6 2",
                f"describe-txn {txn_id}", f"producer b {txn_id}", "init b", f"describe-txn {txn_id}"]
    if after_fence == "send":
        commands.append(f"send a {topic} 6 2 2")
    commands += ["commit a", "abort a", "begin a",
                 "begin b", f"send b {topic} 100 4 2", "commit b",
                 f"consume {topic} 2 read_committed", f"consume {topic} 2 read_uncommitted"]
    listed = scenario(java, broker, *commands)
    results = {r["cmd"]: r for r in listed}

    described = [ok(r) for r in listed if r["cmd"] == f"describe-txn {txn_id}"]
    assert [d["state"] for d in described] == ["Ongoing", "Empty"], listed[0]["run"].describe()
    # the fence bumped the epoch once to abort a's transaction, and b's InitProducerId bumped it again
    assert described[1]["epoch"] == described[0]["epoch"] + 2
    assert described[1]["producer_id"] == described[0]["producer_id"]

    if after_fence == "send":
        fenced(results[f"send a {topic} 6 2 2"])
    fenced(results["commit a"])
    fenced(results["abort a"])
    fenced(results["begin a"])
    for cmd in ("begin b", f"send b {topic} 100 4 2", "commit b"):
        ok(results[cmd])
    committed = ok(results[f"consume {topic} 2 read_committed"])
    assert sorted(committed["i"]) == [100, 101, 102, 103], committed["run"].describe()
    uncommitted = ok(results[f"consume {topic} 2 read_uncommitted"])
    assert sorted(uncommitted["i"]) == [0, 1, 2, 3, 4, 5, 100, 101, 102, 103], uncommitted["run"].describe()


def copy_run(java: JavaClients, broker: Any, *args: object) -> tuple[list[dict[str, Any]], ClientRun]:
    run = java.run(broker, "TxnCopy", *args, timeout=90)
    return run.lines(), run


def test_consume_transform_produce_exactly_once(java: JavaClients, broker: Any) -> None:
    """A read_committed group consumer + transactional producer copies 60 records with sendOffsetsToTransaction.

    The first run aborts its 2nd transaction (rewinding to the committed offsets) and halts its JVM in the middle
    of its 4th, after that transaction's records and offsets reached the broker; the restarted process (same
    transactional.id and group.instance.id) fences the dead one's transaction and finishes. The output holds
    every input record exactly once (read_committed) and the group's committed offsets add up to 60.
    """
    source = unique_topic("jt-eos-in")
    sink = unique_topic("jt-eos-out")
    group = unique_topic("jt-eos-group")
    txn_id = unique_topic("jt-eos-txn")
    total = 60
    ok(java.scenario(broker, "GroupAdmin", (f"create {source} 3", f"create {sink} 3", f"produce {source} 0 60 3"),
                     timeout=90)[2])
    options = ("group.instance.id=copier", "session.timeout.ms=10000")

    events, run = copy_run(java, broker, source, sink, group, txn_id, total, "abort-at=2", "die-at=4", *options)
    assert run.returncode == 3, run.describe()
    kinds = [e.get("event") for e in events]
    assert kinds[-1] == "dying" and "aborted" in kinds and "rewound" in kinds, run.describe()
    assert kinds.count("committed") == 2, run.describe()
    (middle,) = scenario(java, broker, f"group-offsets {group}")
    # the halted transaction's offsets are not committed: only the two committed transactions count
    assert sum(ok(middle)["offsets"].values()) == sum(e["records"] for e in events if e.get("event") == "committed")

    events, run = copy_run(java, broker, source, sink, group, txn_id, total, *options)
    run.check()
    (done,) = [e for e in events if e.get("done")]
    assert done["positions"] == {"0": 20, "1": 20, "2": 20}, run.describe()

    offsets, committed, uncommitted = scenario(java, broker, f"group-offsets {group}",
                                               f"consume {sink} 3 read_committed", f"consume {sink} 3 read_uncommitted")
    assert ok(offsets)["offsets"] == {f"{source}:0": 20, f"{source}:1": 20, f"{source}:2": 20}
    copies = Counter(ok(committed)["src"])
    assert sorted(copies) == sorted(f"{p}:{o}" for p in range(3) for o in range(20)), committed["run"].describe()
    assert set(copies.values()) == {1}, f"duplicates: {[s for s, n in copies.items() if n > 1]}"
    assert sorted(committed["i"]) == list(range(total))
    # the aborted and the halted transactions did write their copies: read_uncommitted sees them twice
    assert len(ok(uncommitted)["src"]) > total, uncommitted["run"].describe()


def test_transaction_timeout_aborts(java: JavaClients, broker_factory: Any) -> None:
    """transaction.timeout.ms=1000: the coordinator aborts the open transaction, bumping the producer's epoch.

    Under Transactions V2 the producer's commit after that abort fails with InvalidTxnStateException, not a
    fencing error (3.9 clients on V1 got ProducerFenced/InvalidProducerEpoch): the same program against Kafka
    4.3.1 (with a sleep past its 10 s abort-check interval) gave exactly these results.
    """
    broker = broker_factory("transaction.abort.timed.out.transaction.cleanup.interval.ms=200")
    topic = unique_topic("jt-timeout")
    txn_id = unique_topic("jt-timeout-txn")
    results = scenario(java, broker, f"create {topic} 2", f"producer p {txn_id} transaction.timeout.ms=1000",
                       "init p", "begin p", f"send p {topic} 0 5 2", f"describe-txn {txn_id}", "sleep 2500",
                       f"describe-txn {txn_id}", "list-txns Ongoing", "commit p",
                       f"consume {topic} 2 read_committed",
                       f"producer q {txn_id}", "init q", "begin q", f"send q {topic} 10 3 2", "commit q",
                       f"consume {topic} 2 read_committed")
    by_cmd = {r["cmd"]: r for r in results}
    for result in results[:5]:
        ok(result)
    ongoing, timed_out = (r for r in results if r["cmd"] == f"describe-txn {txn_id}")
    assert ok(ongoing)["state"] == "Ongoing" and ongoing["timeout_ms"] == 1000, ongoing
    assert ok(timed_out)["state"] == "CompleteAbort", timed_out
    assert timed_out["epoch"] == ongoing["epoch"] + 1, timed_out  # the abort bumped the epoch
    assert txn_id not in ok(by_cmd["list-txns Ongoing"])["transactions"]
    commit = by_cmd["commit p"]
    assert (commit["ok"], commit.get("error"), commit.get("message")) == (
        False, "InvalidTxnStateException", "The producer attempted a transactional operation in an invalid state."
    ), commit
    first_read, second_read = (r for r in results if r["cmd"] == f"consume {topic} 2 read_committed")
    assert ok(first_read)["i"] == [], first_read["run"].describe()
    for cmd in ("init q", "begin q", f"send q {topic} 10 3 2", "commit q"):
        ok(by_cmd[cmd])
    assert sorted(ok(second_read)["i"]) == [10, 11, 12], second_read["run"].describe()


def test_admin_list_and_describe_transactions(java: JavaClients, broker: Any) -> None:
    """Admin.listTransactions / describeTransactions: Ongoing with its partitions while open, then CompleteCommit."""
    topic = unique_topic("jt-admin")
    txn_id = unique_topic("jt-admin-txn")
    results = scenario(java, broker, f"create {topic} 3", f"producer p {txn_id} transaction.timeout.ms=45000",
                       "init p", f"describe-txn {txn_id}", "begin p", f"send p {topic} 0 4 2",
                       "list-txns", "list-txns Ongoing", "list-txns CompleteCommit", f"describe-txn {txn_id}",
                       f"consume {topic} 3 read_committed", f"consume {topic} 3 read_uncommitted", "commit p",
                       "list-txns", "list-txns Ongoing", "list-txns CompleteCommit", f"describe-txn {txn_id}",
                       f"describe-txn {txn_id}-unknown")
    unknown = results.pop()
    assert (unknown["ok"], unknown.get("error")) == (False, "TransactionalIdNotFoundException"), unknown
    for result in results:
        ok(result)
    initial, ongoing, complete = (r for r in results if r["cmd"].startswith("describe-txn"))
    lists = [r["transactions"] for r in results if r["cmd"].startswith("list-txns")]
    open_committed, open_uncommitted = (r for r in results if r["cmd"].startswith("consume"))

    assert initial["state"] == "Empty" and initial["partitions"] == [], initial
    assert ongoing["state"] == "Ongoing", ongoing
    assert ongoing["partitions"] == [f"{topic}:0", f"{topic}:1"], ongoing
    assert ongoing["timeout_ms"] == 45000 and ongoing["start_ms"] is not None, ongoing
    assert ongoing["producer_id"] == initial["producer_id"] and ongoing["epoch"] == initial["epoch"]

    # while the transaction is open, read_committed stops at the last stable offset: its first record
    assert open_committed["i"] == [] and open_committed["end"] == {"0": 0, "1": 0, "2": 0}, open_committed
    assert sorted(open_uncommitted["i"]) == [0, 1, 2, 3] and open_uncommitted["end"] == {"0": 2, "1": 2, "2": 0}

    listed_all, listed_ongoing, listed_complete = lists[:3]
    assert listed_all[txn_id] == {"state": "Ongoing", "producer_id": ongoing["producer_id"]}
    assert listed_ongoing[txn_id] == listed_all[txn_id]
    assert txn_id not in listed_complete
    assert all(t["state"] == "Ongoing" for t in listed_ongoing.values()), listed_ongoing

    assert complete["state"] == "CompleteCommit" and complete["partitions"] == [], complete
    listed_all, listed_ongoing, listed_complete = lists[3:]
    assert listed_all[txn_id]["state"] == "CompleteCommit"
    assert txn_id not in listed_ongoing
    assert listed_complete[txn_id] == {"state": "CompleteCommit", "producer_id": ongoing["producer_id"]}


def test_transactional_offsets_visible_on_commit_only(java: JavaClients, broker: Any) -> None:
    """sendOffsetsToTransaction: pending offsets are unstable (a consumer's committed() waits for them, the Admin
    client sees the last committed ones); an abort drops them, a commit makes them the group's offsets."""
    topic = unique_topic("jt-offsets")
    group = unique_topic("jt-offsets-group")
    txn_id = unique_topic("jt-offsets-txn")
    results = scenario(java, broker, f"create {topic} 2", f"producer p {txn_id}", "init p",
                       "begin p", f"send p {topic} 0 4 2", f"send-offsets p {group} {topic} 0 2", "commit p",
                       "begin p", f"send-offsets p {group} {topic} 0 5", f"send-offsets p {group} {topic} 1 3",
                       f"committed {group} {topic} 2 read_committed 1500",
                       f"group-offsets {group}", "abort p",
                       f"committed {group} {topic} 2 read_committed 10000",
                       "begin p", f"send-offsets p {group} {topic} 1 4", "commit p",
                       f"committed {group} {topic} 2 read_committed 10000", f"group-offsets {group}")
    pending = results[10]
    for result in results:
        if result is not pending:
            ok(result)
    # the consumer's OffsetFetch asks for stable offsets (require_stable): UNSTABLE_OFFSET_COMMIT while the
    # transaction is open, which the consumer retries until its timeout
    assert (pending["ok"], pending.get("error")) == (False, "TimeoutException"), pending
    assert results[11]["offsets"] == {f"{topic}:0": 2}, results[11]  # Admin: require_stable false
    assert results[13]["offsets"] == {"0": 2, "1": None}, results[13]
    assert results[17]["offsets"] == {"0": 2, "1": 4}, results[17]
    assert results[18]["offsets"] == {f"{topic}:0": 2, f"{topic}:1": 4}, results[18]
