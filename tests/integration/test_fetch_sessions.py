"""Fetch sessions (KIP-227) over TCP: raw full and incremental Fetch requests with every session error, sessions
per node, a full cache, and the Java consumer (which uses sessions) reading while its partition set changes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from minibroker.core.cluster_model import Node
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import FetchRequest
from minibroker.testing.embedded import BrokerThread, ClusterThread
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.clients import JavaClients

FetchTopic = FetchRequest.FetchTopic
FetchPartition = FetchTopic.FetchPartition
ForgottenTopic = FetchRequest.ForgottenTopic


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerThread]:
    with BrokerThread() as running:
        yield running


def append(broker: BrokerThread, topic: str, partition: int, *values: bytes) -> None:
    batch = records.build_batch([(None, v) for v in values])
    broker.call(lambda: broker.cluster.append(broker.cluster.partition(topic, partition), batch))


def fetch(topic: Any, partitions: dict[int, int], session_id: int, epoch: int, version: int = 12,
          forget: list[int] | None = None) -> FetchRequest:
    """A Fetch of `partitions` ({partition: offset}) of `topic` (a name, or a topic id from v13)."""
    by = {"topic_id": topic} if version >= 13 else {"topic": topic}
    parts = [FetchPartition(partition=p, current_leader_epoch=-1, fetch_offset=o, last_fetched_epoch=-1,
                            log_start_offset=-1, partition_max_bytes=1 << 20) for p, o in partitions.items()]
    forgotten = [ForgottenTopic(partitions=forget, **by)] if forget else []
    return FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
                        session_id=session_id, session_epoch=epoch, rack_id="",
                        topics=[FetchTopic(partitions=parts, **by)] if parts else [], forgotten_topics_data=forgotten)


def answered(response: Any) -> dict[int, tuple[int, int, bool]]:
    """{partition: (error, high watermark, has records)} of an answer."""
    return {p.partition_index: (p.error_code, p.high_watermark, bool(p.records))
            for t in response.responses for p in t.partitions}


def wire(node: Node) -> WireClient:
    return WireClient(node.host, node.port)


def test_incremental_fetches_carry_only_changes_and_follow_the_partition_set(broker: BrokerThread) -> None:
    topic = unique_topic("sessions")
    broker.create_topic(topic, 3)
    append(broker, topic, 0, b"a", b"b")
    with wire(broker.cluster.nodes[0]) as client:
        first = client.request(fetch(topic, {0: 0, 1: 0}, 0, 0), 12)
        assert first.error_code == 0 and first.session_id != 0
        assert answered(first) == {0: (0, 2, True), 1: (0, 0, False)}
        session_id = first.session_id
        # nothing new: an empty answer in the same session
        nothing = client.request(fetch(topic, {0: 2}, session_id, 1), 12)
        assert (nothing.error_code, nothing.session_id, answered(nothing)) == (0, session_id, {})
        # new records on partition 1 only; partition 2 added, partition 0 forgotten
        append(broker, topic, 1, b"c")
        changed = client.request(fetch(topic, {2: 0}, session_id, 2, forget=[0]), 12)
        assert answered(changed) == {1: (0, 1, True), 2: (0, 0, False)}
        # partition 0 is out of the session: records there are not fetched
        append(broker, topic, 0, b"d")
        quiet = client.request(fetch(topic, {1: 1}, session_id, 3), 12)
        assert answered(quiet) == {}
        # forgetting everything ends the session; the request is answered sessionless
        ended = client.request(fetch(topic, {}, session_id, 4, forget=[1, 2]), 12)
        assert (ended.error_code, ended.session_id, answered(ended)) == (0, 0, {})
        gone = client.request(fetch(topic, {}, session_id, 5), 12)
        assert (gone.error_code, gone.session_id, answered(gone)) == (ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0, {})


def test_every_session_error(broker: BrokerThread) -> None:
    topic = unique_topic("session-errors")
    broker.create_topic(topic, 1)
    with wire(broker.cluster.nodes[0]) as client:
        session_id = client.request(fetch(topic, {0: 0}, 0, 0), 12).session_id
        assert session_id != 0
        unknown = client.request(fetch(topic, {0: 0}, session_id ^ 1, 1), 12)
        assert (unknown.error_code, unknown.session_id, unknown.responses) == \
            (ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0, [])
        no_id = client.request(fetch(topic, {0: 0}, 0, 1), 12)
        assert no_id.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
        ahead = client.request(fetch(topic, {0: 0}, session_id, 2), 12)
        assert (ahead.error_code, ahead.session_id, ahead.responses) == \
            (ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0, [])
        topic_id = broker.cluster.topics[topic].topic_id
        by_id = client.request(fetch(topic_id, {0: 0}, session_id, 1, version=13), 13)
        assert by_id.error_code == ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR
        # none of these moved the session on: epoch 1 is still the one expected, and only once
        assert client.request(fetch(topic, {}, session_id, 1), 12).error_code == 0
        replay = client.request(fetch(topic, {}, session_id, 1), 12)
        assert replay.error_code == ErrorCode.INVALID_FETCH_SESSION_EPOCH
        # a full request at the final epoch closes the session and fetches sessionless
        closing = client.request(fetch(topic, {0: 0}, session_id, -1), 12)
        assert (closing.error_code, closing.session_id) == (0, 0) and answered(closing) == {0: (0, 0, False)}
        closed = client.request(fetch(topic, {}, session_id, 2), 12)
        assert closed.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_sessions_by_topic_id_from_v13(broker: BrokerThread) -> None:
    topic = unique_topic("session-ids")
    broker.create_topic(topic, 2)
    topic_id = broker.cluster.topics[topic].topic_id
    with wire(broker.cluster.nodes[0]) as client:
        first = client.request(fetch(topic_id, {0: 0, 1: 0}, 0, 0, version=13), 13)
        assert first.session_id != 0 and first.responses[0].topic_id == topic_id
        append(broker, topic, 1, b"x")
        stranger = uuid.uuid4()
        changed = client.request(fetch(stranger, {0: 0}, first.session_id, 1, version=16), 16)
        by_topic = {t.topic_id: answered_topic(t) for t in changed.responses}
        assert by_topic == {topic_id: {1: (0, 1, True)}, stranger: {0: (ErrorCode.UNKNOWN_TOPIC_ID, -1, False)}}
        v12 = client.request(fetch(topic, {}, first.session_id, 2), 12)
        assert v12.error_code == ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR


def answered_topic(topic: Any) -> dict[int, tuple[int, int, bool]]:
    return {p.partition_index: (p.error_code, p.high_watermark, bool(p.records)) for p in topic.partitions}


def test_sessions_belong_to_the_node_that_made_them() -> None:
    with ClusterThread(nodes=2) as cluster:
        topic = cluster.create_topic(unique_topic("node-sessions"), 1)
        one, two = cluster.cluster.nodes
        with wire(one) as first, wire(two) as second:
            session_id = first.request(fetch(topic, {0: 0}, 0, 0), 12).session_id
            assert session_id != 0
            elsewhere = second.request(fetch(topic, {}, session_id, 1), 12)
            assert elsewhere.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
            assert first.request(fetch(topic, {}, session_id, 1), 12).error_code == 0
        assert len(cluster.cluster.fetch_sessions(one.node_id)) == 1
        assert len(cluster.cluster.fetch_sessions(two.node_id)) == 0


def test_a_full_cache_answers_without_a_session() -> None:
    with BrokerThread(config={"max.incremental.fetch.session.cache.slots": 1}) as running:
        topic = running.create_topic(unique_topic("full-cache"), 2)
        append(running, topic, 0, b"a")
        with wire(running.cluster.nodes[0]) as client:
            assert client.request(fetch(topic, {0: 0}, 0, 0), 12).session_id != 0
            # the only slot holds a session younger than two minutes: nothing may evict it
            late = client.request(fetch(topic, {0: 0, 1: 0}, 0, 0), 12)
            assert (late.error_code, late.session_id) == (0, 0)
            assert answered(late) == {0: (0, 1, True), 1: (0, 0, False)}


# --- the Java consumer -------------------------------------------------------------------------------


@pytest.mark.java
def test_java_consumer_reads_everything_once_while_its_partitions_change(java: JavaClients) -> None:
    partitions, per_round = 6, 40
    rounds = ["0,1,2", "0,1,2,3,4,5", "1,4", "0,1,2,3,4,5"]
    with ClusterThread(nodes=2) as cluster:
        topic = cluster.create_topic(unique_topic("java-sessions"), partitions)
        run = java.run(cluster, "FetchSessionScenario", topic, partitions, per_round, *rounds).check()
        lines = run.lines()
        summary = lines[-1]
        assert summary.get("done") and summary["produced"] == partitions * per_round * len(rounds), run.describe()
        expected = {str(p): per_round * len(rounds) for p in range(partitions)}
        assert summary["end"] == expected, run.describe()
        # every record read exactly once
        assert summary["read"] == expected and summary["distinct"] == expected, run.describe()
        caches = [cluster.cluster.fetch_sessions(node.node_id) for node in cluster.cluster.nodes]
        # both nodes led partitions, so the consumer opened sessions with each and changed them incrementally
        assert all(cache.created >= 1 and cache.incremental_fetches > 0 for cache in caches)
        assert sum(cache.partitions_added for cache in caches) > 0
        assert sum(cache.partitions_forgotten for cache in caches) > 0
