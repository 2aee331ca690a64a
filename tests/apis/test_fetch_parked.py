"""A parked Fetch, driven with decoded requests and a manual clock: what wakes it and what it answers.

Kafka's DelayedFetch counts only bytes a fetch could read (below the last stable offset for READ_COMMITTED), and
its answer is read when it is sent, after the append that woke it has finished with its producer state.
"""

from __future__ import annotations

from typing import Any

from minibroker.apis import fetch
from minibroker.apis.context import RequestContext
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.pending import Pending
from minibroker.protocol import records
from minibroker.protocol.messages import FetchRequest

READ_UNCOMMITTED, READ_COMMITTED = 0, 1


def parked_fetch(cluster: Cluster, topic: str, isolation: int, offset: int = 0, max_wait_ms: int = 5000) -> Any:
    request = FetchRequest(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 20,
                           isolation_level=isolation, session_id=0, session_epoch=-1, rack_id="",
                           topics=[FetchRequest.FetchTopic(topic=topic, partitions=[
                               FetchRequest.FetchTopic.FetchPartition(partition=0, fetch_offset=offset,
                                                                      current_leader_epoch=-1,
                                                                      partition_max_bytes=1 << 20)])],
                           forgotten_topics_data=[])
    ctx = RequestContext(cluster, cluster.nodes[0], fetch.API_KEY, 12, 1, "test")
    return fetch.handle(request, ctx)


def open_transaction(cluster: Cluster, transactional_id: str, topic: str) -> tuple[int, int]:
    error, producer_id, epoch = cluster.transactions.init_producer_id(transactional_id, 60000, -1, -1)
    assert error == 0
    cluster.transactions.add_partitions(transactional_id, producer_id, epoch, [(topic, 0)])
    return producer_id, epoch


def transactional_batch(producer_id: int, epoch: int, sequence: int, now: int) -> bytes:
    return records.build_batch([(None, b"uncommitted")], timestamp=now, producer_id=producer_id,
                               producer_epoch=epoch, base_sequence=sequence, transactional=True)


def only_partition(response: Any) -> Any:
    return response.responses[0].partitions[0]


def test_read_committed_fetch_is_not_woken_by_an_open_transaction() -> None:
    clock = ManualClock()
    cluster = Cluster(clock=clock)
    cluster.create_topic("t", 1)
    partition = cluster.partition("t", 0)
    producer_id, epoch = open_transaction(cluster, "tx", "t")
    pending = parked_fetch(cluster, "t", READ_COMMITTED)
    assert isinstance(pending, Pending) and not pending.done

    cluster.append(partition, transactional_batch(producer_id, epoch, 0, clock.now_ms()))

    assert not pending.done  # nothing below the LSO arrived
    clock.advance(5000)
    pending.complete()  # the server's timer at the deadline
    answer = only_partition(pending.result())
    assert (answer.records, answer.high_watermark, answer.last_stable_offset) == (b"", 1, 0)


def test_read_committed_fetch_is_woken_by_the_commit_and_sees_the_committed_batch() -> None:
    clock = ManualClock()
    cluster = Cluster(clock=clock)
    cluster.create_topic("t", 1)
    partition = cluster.partition("t", 0)
    producer_id, epoch = open_transaction(cluster, "tx", "t")
    cluster.append(partition, transactional_batch(producer_id, epoch, 0, clock.now_ms()))
    pending = parked_fetch(cluster, "t", READ_COMMITTED)
    assert isinstance(pending, Pending) and not pending.done

    assert cluster.transactions.end_txn("tx", producer_id, epoch, committed=True) == 0

    assert pending.done
    answer = only_partition(pending.result())
    assert answer.last_stable_offset == 2 and answer.high_watermark == 2
    data = bytes(answer.records)
    offsets = [records.read_header(data[s:e]).base_offset for s, e in records.split_batches(data)]
    assert offsets == [0, 1]  # the data batch and its COMMIT marker


def test_woken_fetch_answer_is_built_after_the_append_finished() -> None:
    # A watcher that looks at the answer the moment it is woken must see the producer state of the
    # append that woke it: the open transaction holds the LSO at the batch's first offset.
    clock = ManualClock()
    cluster = Cluster(clock=clock)
    cluster.create_topic("t", 1)
    partition = cluster.partition("t", 0)
    producer_id, epoch = open_transaction(cluster, "tx", "t")
    pending = parked_fetch(cluster, "t", READ_UNCOMMITTED)
    assert isinstance(pending, Pending)
    seen: list[Any] = []
    pending.add_done_callback(lambda done: seen.append(only_partition(done.result())))

    cluster.append(partition, transactional_batch(producer_id, epoch, 0, clock.now_ms()))

    assert len(seen) == 1
    assert (seen[0].high_watermark, seen[0].last_stable_offset) == (1, 0)


def test_a_fetch_answer_is_built_when_it_is_read_not_when_it_is_woken() -> None:
    clock = ManualClock()
    cluster = Cluster(clock=clock)
    cluster.create_topic("t", 1)
    partition = cluster.partition("t", 0)
    pending = parked_fetch(cluster, "t", READ_UNCOMMITTED)
    assert isinstance(pending, Pending)
    cluster.append(partition, records.build_batch([(None, b"a")], timestamp=clock.now_ms()))
    assert pending.done
    cluster.append(partition, records.build_batch([(None, b"b")], timestamp=clock.now_ms()))
    # the server reads the answer when it is about to send it: both batches are there
    assert only_partition(pending.result()).high_watermark == 2
