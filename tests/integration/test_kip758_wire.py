"""KIP-758's latest-append producer state on the wire: raw Produce requests to `producer.state.mode=latest-append`.

Per producer id and partition the broker keeps the epoch and the latest batch only. The next batch must follow
it (wrapping at Int.MaxValue); an exact retry of it gets NONE with its offset; a batch whose sequences both lie
within `max.in.flight.sequence.number.per.connection` at or below its last sequence gets
DUPLICATE_SEQUENCE_NUMBER with no offset and stores nothing; anything else is OUT_OF_ORDER_SEQUENCE_NUMBER.
The mode of the partition's leader node decides, so a cluster can mix designs as an upgrade would.
"""

from __future__ import annotations

from typing import Any

import pytest

from minibroker.core.clock import ManualClock
from minibroker.core.config import ConfigError
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import DescribeProducersRequest, FetchRequest, InitProducerIdRequest
from minibroker.protocol.records import INT32_MAX
from minibroker.testing.embedded import BrokerThread
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.test_config_fidelity import configs, error, incremental, synonyms_of
from tests.integration.test_wire_protocol import create_topic, partition_response, produce_request

NOW = 1_700_000_000_000  # the ManualClock's start: batch timestamps are the broker's "now"
LATEST_APPEND = {"producer.state.mode": "latest-append"}
MODE, RANGE = "producer.state.mode", "max.in.flight.sequence.number.per.connection"
WINDOW = "producer.state.batches.to.retain"
BROKER, SET, DELETE = 4, 0, 1
DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 2, 3, 4, 5

NONE = ErrorCode.NONE
DUPLICATE = ErrorCode.DUPLICATE_SEQUENCE_NUMBER
OUT_OF_ORDER = ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
FENCED = ErrorCode.INVALID_PRODUCER_EPOCH


class Sender:
    """One idempotent producer id sending crafted batches to partition 0 of a topic."""

    def __init__(self, wire: WireClient, topic: str, topic_id: Any, version: int = 14) -> None:
        init = wire.request(InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000), 4)
        assert init.error_code == 0
        self.wire, self.topic, self.topic_id, self.version = wire, topic, topic_id, version
        self.producer_id = init.producer_id

    def send(self, sequence: int, count: int = 1, epoch: int = 0, timestamp: int = NOW, version: int | None = None,
             wire: WireClient | None = None) -> Any:
        """The partition's answer to one batch of `count` records from `sequence` (to `wire`, another node)."""
        version = self.version if version is None else version
        batch = records.build_batch([(None, b"r")] * count, timestamp=timestamp, producer_id=self.producer_id,
                                    producer_epoch=epoch, base_sequence=sequence)
        request = produce_request(self.topic, batch, version=version, topic_id=self.topic_id)
        return partition_response((wire or self.wire).request(request, version))

    def outcome(self, sequence: int, count: int = 1, **options: Any) -> tuple[ErrorCode, int]:
        """(error, base offset) of one batch."""
        answer = self.send(sequence, count, **options)
        return ErrorCode(answer.error_code), answer.base_offset


def high_watermark(wire: WireClient, topic: str) -> int:
    request = FetchRequest(
        replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1024, isolation_level=0,
        topics=[FetchRequest.FetchTopic(topic=topic, partitions=[FetchRequest.FetchTopic.FetchPartition(
            partition=0, fetch_offset=0, partition_max_bytes=1024)])])
    partition = wire.request(request, 11).responses[0].partitions[0]
    assert partition.error_code == 0
    return int(partition.high_watermark)


def active_producers(wire: WireClient, topic: str) -> list[tuple[int, int, int, int, int]]:
    """DescribeProducers of partition 0: (producer id, epoch, last sequence, last timestamp, txn start offset)."""
    request = DescribeProducersRequest(topics=[DescribeProducersRequest.TopicRequest(name=topic,
                                                                                     partition_indexes=[0])])
    partition = wire.request(request, 0).topics[0].partitions[0]
    assert partition.error_code == 0
    return [(p.producer_id, p.producer_epoch, p.last_sequence, p.last_timestamp, p.current_txn_start_offset)
            for p in partition.active_producers]


def new_sender(wire: WireClient, window: int | None = None, version: int = 14) -> Sender:
    """A producer on a new one-partition topic (with a KIP-1269 window override if given)."""
    topic = unique_topic("k758")
    topic_id = create_topic(wire, topic, configs={WINDOW: str(window)} if window else {})
    return Sender(wire, topic, topic_id, version)


@pytest.fixture(scope="module")
def latest():
    with BrokerThread(config=LATEST_APPEND, clock=ManualClock(NOW)) as broker:
        yield broker


@pytest.fixture
def wire(latest):
    with WireClient(latest.host, latest.port) as client:
        yield client


# -- the rules ----------------------------------------------------------------------------------------------


def test_the_next_batch_follows_the_latest_and_its_exact_retry_gets_the_original_offset(wire):
    p = new_sender(wire)
    assert p.outcome(0, 3) == (NONE, 0)
    first = p.send(3, 3, timestamp=NOW - 5000)
    assert (first.error_code, first.base_offset, first.log_append_time_ms) == (NONE, 3, -1)
    again = p.send(3, 3, timestamp=NOW - 5000)
    # as Kafka answers a retained duplicate: the original offset and the stored batch's timestamp
    assert (again.error_code, again.base_offset, again.log_append_time_ms, again.log_start_offset) == (
        NONE, 3, NOW - 5000, 0)
    assert p.outcome(7) == (OUT_OF_ORDER, -1)  # a gap
    assert p.outcome(6) == (NONE, 6)
    assert high_watermark(wire, p.topic) == 7  # the retry stored nothing


@pytest.mark.parametrize("version", [3, 8, 13, 14])
def test_a_retry_of_an_older_batch_is_duplicate_sequence_number_without_offset_and_stores_nothing(wire, version):
    p = new_sender(wire, version=version)
    for sequence in (0, 3, 6):
        assert p.outcome(sequence, 3) == (NONE, sequence)
    for sequence in (0, 3):
        answer = p.send(sequence, 3)
        assert (answer.error_code, answer.base_offset, answer.log_append_time_ms) == (DUPLICATE, -1, -1)
        assert answer.log_start_offset == (0 if version >= 5 else -1)
    assert high_watermark(wire, p.topic) == 9
    assert p.outcome(6, 3) == (NONE, 6)  # the latest batch still answers with its offset
    assert p.outcome(9) == (NONE, 9)  # and the refusals did not move the producer's state


def test_batches_inside_the_latest_are_duplicates_and_batches_crossing_its_end_are_out_of_order(wire):
    p = new_sender(wire)
    assert p.outcome(0, 6) == (NONE, 0)
    assert p.outcome(6, 3) == (NONE, 6)  # latest: sequences 6..8
    assert p.outcome(6, 2) == (DUPLICATE, -1)  # 6..7: part of the latest, not the same batch
    assert p.outcome(8) == (DUPLICATE, -1)  # 8..8: ends where the latest does, starts elsewhere
    assert p.outcome(2, 5) == (DUPLICATE, -1)  # 2..6: straddles two appended batches
    assert p.outcome(7, 3) == (OUT_OF_ORDER, -1)  # 7..9: ends beyond the latest
    assert p.outcome(9) == (NONE, 9)


def test_the_duplicate_range_is_max_in_flight_sequence_number_per_connection(latest, wire):
    p = new_sender(wire)
    assert p.outcome(0, 17) == (NONE, 0)
    assert p.outcome(17, 4) == (NONE, 17)  # latest: 17..20
    try:
        assert error(incremental(wire, BROKER, "", (RANGE, SET, "4"))) == (0, None)
        # 20 - 17 = 3 is inside a range of 4; 20 - 16 = 4 is not
        assert p.outcome(17) == (DUPLICATE, -1)
        assert p.outcome(17, 3) == (DUPLICATE, -1)
        assert p.outcome(16) == (OUT_OF_ORDER, -1)
        assert p.outcome(16, 2) == (OUT_OF_ORDER, -1)  # its first sequence lies outside
        assert p.outcome(0) == (OUT_OF_ORDER, -1)
        assert p.outcome(22) == (OUT_OF_ORDER, -1)  # above the latest: a gap, whatever the range
        assert p.outcome(17, 4) == (NONE, 17)
        assert error(incremental(wire, BROKER, "0", (RANGE, SET, "5"))) == (0, None)  # the node's own wins
        assert p.outcome(16) == (DUPLICATE, -1)
        assert p.outcome(15) == (OUT_OF_ORDER, -1)
    finally:
        assert error(incremental(wire, BROKER, "0", (RANGE, DELETE, None))) == (0, None)
        assert error(incremental(wire, BROKER, "", (RANGE, DELETE, None))) == (0, None)
    assert p.outcome(0) == (DUPLICATE, -1)  # back to the default of 10,000,000
    assert p.outcome(21) == (NONE, 21)


def test_sequences_wrap_at_int_max(wire):
    p = new_sender(wire)
    assert p.outcome(INT32_MAX - 2, 3) == (NONE, 0)  # ends at Int.MaxValue
    assert p.outcome(1) == (OUT_OF_ORDER, -1)  # the next after Int.MaxValue is 0
    assert p.outcome(0, 2) == (NONE, 3)
    assert p.outcome(INT32_MAX - 2, 3) == (DUPLICATE, -1)  # below the latest, across the wrap
    assert p.outcome(INT32_MAX, 2) == (DUPLICATE, -1)  # Int.MaxValue..0, itself wrapping
    assert p.outcome(0, 2) == (NONE, 3)
    assert p.outcome(2) == (NONE, 5)
    wrapping = new_sender(wire)
    assert wrapping.outcome(INT32_MAX - 1, 3) == (NONE, 0)  # Int.MaxValue - 1 .. 0 in one batch
    assert wrapping.outcome(INT32_MAX - 1, 3) == (NONE, 0)  # the latest: its offset
    assert wrapping.outcome(1) == (NONE, 3)
    assert wrapping.outcome(INT32_MAX - 1, 3) == (DUPLICATE, -1)


def test_the_duplicate_range_counts_across_the_wrap(wire):
    p = new_sender(wire)
    assert p.outcome(INT32_MAX - 2, 3) == (NONE, 0)
    assert p.outcome(0, 2) == (NONE, 3)  # latest: 0..1
    try:
        assert error(incremental(wire, BROKER, "", (RANGE, SET, "4"))) == (0, None)
        assert p.outcome(INT32_MAX - 1, 2) == (DUPLICATE, -1)  # 3 and 2 below 1, counting the wrap
        assert p.outcome(INT32_MAX - 2) == (OUT_OF_ORDER, -1)  # 4 below
    finally:
        assert error(incremental(wire, BROKER, "", (RANGE, DELETE, None))) == (0, None)


def test_a_new_epoch_starts_at_sequence_zero_and_fences_the_old_one(wire):
    p = new_sender(wire)
    assert p.outcome(0, 3) == (NONE, 0)
    assert p.outcome(3, 3) == (NONE, 3)
    assert p.outcome(6, epoch=1) == (OUT_OF_ORDER, -1)  # a new epoch must start at 0
    assert p.outcome(0, epoch=1) == (NONE, 6)
    assert p.outcome(0, epoch=1) == (NONE, 6)  # the new epoch's latest
    assert p.outcome(3, 3, epoch=0) == (FENCED, -1)  # the old latest is no duplicate any more
    assert p.outcome(6, epoch=0) == (FENCED, -1)
    assert p.outcome(1, 2, epoch=1) == (NONE, 7)
    assert p.outcome(0, epoch=1) == (DUPLICATE, -1)
    assert high_watermark(wire, p.topic) == 9


def test_describe_producers_shows_the_latest_batch(wire):
    p = new_sender(wire)
    other = Sender(wire, p.topic, p.topic_id)
    assert p.outcome(0, 3, timestamp=NOW - 3) == (NONE, 0)
    assert p.outcome(3, 7, timestamp=NOW - 1) == (NONE, 3)
    assert other.outcome(40, 2, timestamp=NOW - 2) == (NONE, 10)  # an unknown producer starts anywhere
    expected = sorted([(p.producer_id, 0, 9, NOW - 1, -1), (other.producer_id, 0, 41, NOW - 2, -1)])
    assert sorted(active_producers(wire, p.topic)) == expected
    assert p.outcome(0, 3, timestamp=NOW) == (DUPLICATE, -1)
    assert p.outcome(11, timestamp=NOW) == (OUT_OF_ORDER, -1)
    assert p.outcome(3, 7, timestamp=NOW - 1) == (NONE, 3)
    assert sorted(active_producers(wire, p.topic)) == expected  # refusals and retries change nothing


def test_an_idle_producer_expires_after_producer_id_expiration_ms(kafka_broker_factory):
    clock = ManualClock(NOW)
    broker = kafka_broker_factory(clock=clock, config={
        **LATEST_APPEND, "producer.id.expiration.ms": "60000", "producer.id.expiration.check.interval.ms": "1"})
    with WireClient(broker.host, broker.port) as wire:
        p = new_sender(wire)
        assert p.outcome(0, 3) == (NONE, 0)
        assert p.outcome(3, 3) == (NONE, 3)
        broker.call(clock.advance, 59_999)
        broker.call(broker.cluster.tick)  # the server's periodic work, run now on the broker's thread
        assert [state[:3] for state in active_producers(wire, p.topic)] == [(p.producer_id, 0, 5)]
        assert p.outcome(3, 3) == (NONE, 3)  # a retry does not renew the producer: its timestamp is the batch's
        assert p.outcome(0, 3) == (DUPLICATE, -1)
        broker.call(clock.advance, 1)
        broker.call(broker.cluster.tick)
        assert active_producers(wire, p.topic) == []
        # unknown again (KIP-854): its latest batch is appended anew, any sequence is accepted
        assert p.outcome(3, 3) == (NONE, 6)
        assert p.outcome(3, 3) == (NONE, 6)
        assert p.outcome(0, 3) == (DUPLICATE, -1)
        assert high_watermark(wire, p.topic) == 9


# -- what Produce v14 says ----------------------------------------------------------------------------------


def test_produce_v14_reports_one_batch_to_retain_in_latest_append_and_the_topic_window_otherwise(
        kafka_broker_factory):
    broker = kafka_broker_factory()
    with WireClient(broker.host, broker.port) as wire:
        p = new_sender(wire, window=20)
        assert p.send(0).producer_state_batches_to_retain == 20
        assert error(incremental(wire, BROKER, "", (MODE, SET, "latest-append"))) == (0, None)
        answers = [p.send(1), p.send(1), p.send(0), p.send(5)]  # appended, retry, duplicate, gap
        assert [(a.error_code, a.producer_state_batches_to_retain) for a in answers] == [
            (NONE, 1), (NONE, 1), (DUPLICATE, 1), (OUT_OF_ORDER, 1)]
        assert error(incremental(wire, BROKER, "", (MODE, DELETE, None))) == (0, None)
        assert p.send(2).producer_state_batches_to_retain == 20
        # latest-append kept one batch: the window grows again from the next appends
        assert p.outcome(0) == (OUT_OF_ORDER, -1)
        assert p.outcome(1) == (NONE, 1)
        assert p.outcome(3) == (NONE, 3)
        assert p.outcome(2) == (NONE, 2)


# -- the configs --------------------------------------------------------------------------------------------


def test_describe_configs_shows_both_configs_with_their_sources(kafka_broker_factory):
    broker = kafka_broker_factory(config={RANGE: "1000"})
    with WireClient(broker.host, broker.port) as wire:
        described = configs(wire, BROKER, "0", [MODE, RANGE])
        mode, limit = described[MODE], described[RANGE]
        assert (mode.value, mode.config_source, mode.read_only, mode.config_type) == ("window", DEFAULT, False, 2)
        assert synonyms_of(mode) == [(MODE, "window", DEFAULT)]
        assert (limit.value, limit.config_source, limit.read_only, limit.config_type) == ("1000", STATIC, False, 3)
        assert synonyms_of(limit) == [(RANGE, "1000", STATIC), (RANGE, "10000000", DEFAULT)]
        assert error(incremental(wire, BROKER, "", (MODE, SET, "latest-append"), (RANGE, SET, "1073741824"))) == (
            0, None)
        assert error(incremental(wire, BROKER, "0", (RANGE, SET, "1"))) == (0, None)
        described = configs(wire, BROKER, "0", [MODE, RANGE])
        assert (described[MODE].value, described[MODE].config_source) == ("latest-append", DYNAMIC_DEFAULT)
        assert synonyms_of(described[RANGE]) == [(RANGE, "1", DYNAMIC_BROKER), (RANGE, "1073741824", DYNAMIC_DEFAULT),
                                                 (RANGE, "1000", STATIC), (RANGE, "10000000", DEFAULT)]
        default = configs(wire, BROKER, "")
        assert {name: (c.value, c.config_source) for name, c in default.items()} == {
            MODE: ("latest-append", DYNAMIC_DEFAULT), RANGE: ("1073741824", DYNAMIC_DEFAULT),
            # Kafka 4.1+ with ELR keeps min.insync.replicas at the cluster level (KIP-966)
            "min.insync.replicas": ("1", DYNAMIC_DEFAULT)}


BAD_VALUES = [
    (MODE, "latest", "String must be one of: window, latest-append"),
    (MODE, "LATEST-APPEND", "String must be one of: window, latest-append"),
    (RANGE, "0", "Value must be at least 1"),
    (RANGE, "1073741825", "Value must be no more than 1073741824"),  # 2^30: the duplicate and future ranges meet
    (RANGE, "ten", "Not a number of type INT"),
]


@pytest.mark.parametrize(("name", "value", "reason"), BAD_VALUES)
def test_bad_values_are_refused_with_kafkas_invalid_config_message(kafka_broker_factory, name, value, reason):
    message = f"Invalid value {value} for configuration {name}: {reason}"
    with pytest.raises(ConfigError) as refused:
        BrokerThread(config={name: value})
    assert (refused.value.code, refused.value.message) == (ErrorCode.INVALID_CONFIG, message)
    broker = kafka_broker_factory()
    with WireClient(broker.host, broker.port) as wire:
        for resource in ("", "0"):
            # a dynamic broker config's bad value: Kafka's ConfigAdminManager answers INVALID_REQUEST
            assert error(incremental(wire, BROKER, resource, (name, SET, value))) == (ErrorCode.INVALID_REQUEST,
                                                                                       message)
        described = configs(wire, BROKER, "0", [MODE, RANGE])
        assert {n: (c.value, c.config_source) for n, c in described.items()} == {
            MODE: ("window", DEFAULT), RANGE: ("10000000", DEFAULT)}


def test_an_older_release_does_not_know_the_configs(kafka_broker_factory):
    for name, value in ((MODE, "latest-append"), (RANGE, "100")):
        with pytest.raises(ConfigError, match=f"^Unknown broker config name: {name}$"):
            BrokerThread(as_version="3.9", config={name: value})
    broker = kafka_broker_factory(as_version="3.9")
    with WireClient(broker.host, broker.port) as wire:
        assert not {MODE, RANGE} & set(configs(wire, BROKER, "0"))
        for resource in ("", "0"):
            for name, value in ((MODE, "latest-append"), (RANGE, "100")):
                # a name the release does not know is kept, as Kafka keeps unknown broker configs (the
                # broker_alter_configs scenario, against 4.3.1); it changes nothing
                assert error(incremental(wire, BROKER, resource, (name, SET, value))) == (0, None)


def test_a_leader_without_kip_1269_keeps_kafkas_five_batches_whatever_the_mode(kafka_broker_factory):
    broker = kafka_broker_factory(nodes=2, config={"node.id": "1", **LATEST_APPEND}, node_releases={2: "3.9"})
    ports = {node.node_id: node.port for node in broker.cluster.nodes}
    with WireClient(broker.host, ports[1]) as node1, WireClient(broker.host, ports[2]) as node2:
        old, new = new_sender(node1, version=11), new_sender(node1)
        broker.control.move_leader(old.topic, 0, 2)
        broker.control.move_leader(new.topic, 0, 1)
        for sequence in range(5):
            assert old.outcome(sequence, wire=node2) == (NONE, sequence)
            assert new.outcome(sequence) == (NONE, sequence)
        assert old.outcome(0, wire=node2) == (NONE, 0)  # Kafka 3.9's window of 5
        assert new.outcome(0) == (DUPLICATE, -1)


# -- a mixed cluster ----------------------------------------------------------------------------------------


def test_a_leader_moved_between_a_window_node_and_a_latest_append_node_follows_each_nodes_rule(kafka_broker_factory):
    broker = kafka_broker_factory(nodes=2, config={"node.id": "1"})
    ports = {node.node_id: node.port for node in broker.cluster.nodes}
    with WireClient(broker.host, ports[1]) as node1, WireClient(broker.host, ports[2]) as node2:
        # Node 2 in latest-append through the cluster default, node 1 kept in window mode by its own resource
        # (BROKER "2" itself is refused: see test_latest_append_set_on_one_node_through_its_broker_resource).
        assert error(incremental(node1, BROKER, "", (MODE, SET, "latest-append"))) == (0, None)
        assert error(incremental(node1, BROKER, "1", (MODE, SET, "window"))) == (0, None)
        assert configs(node1, BROKER, "1", [MODE])[MODE].value == "window"
        assert configs(node2, BROKER, "2", [MODE])[MODE].value == "latest-append"
        p = new_sender(node1, window=5)
        broker.control.move_leader(p.topic, 0, 1)
        for sequence in range(5):
            answer = p.send(sequence)
            assert (answer.error_code, answer.base_offset, answer.producer_state_batches_to_retain) == (
                NONE, sequence, 5)
        assert p.outcome(0) == (NONE, 0)  # node 1 remembers five batches
        broker.control.move_leader(p.topic, 0, 2)
        assert p.outcome(5) == (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)
        assert p.outcome(4, wire=node2) == (NONE, 4)  # node 2: the latest keeps its offset ...
        assert p.outcome(3, wire=node2) == (DUPLICATE, -1)  # ... older ones are duplicates without one
        assert p.outcome(0, wire=node2) == (DUPLICATE, -1)
        answer = p.send(5, wire=node2)
        assert (answer.error_code, answer.base_offset, answer.producer_state_batches_to_retain) == (NONE, 5, 1)
        assert p.outcome(5, wire=node2) == (NONE, 5)
        broker.control.move_leader(p.topic, 0, 1)
        assert p.outcome(5) == (NONE, 5)  # the latest is still known on node 1
        assert p.outcome(6) == (NONE, 6)
        assert p.send(7).producer_state_batches_to_retain == 5
        assert p.outcome(6) == (NONE, 6)  # node 1's window again
        assert high_watermark(node1, p.topic) == 8


def test_latest_append_set_on_one_node_through_its_broker_resource(kafka_broker_factory):
    broker = kafka_broker_factory(nodes=2, config={"node.id": "1"})
    ports = {node.node_id: node.port for node in broker.cluster.nodes}
    with WireClient(broker.host, ports[1]) as node1, WireClient(broker.host, ports[2]) as node2:
        assert error(incremental(node2, BROKER, "2", (MODE, SET, "latest-append"))) == (0, None)
        assert (configs(node2, BROKER, "2", [MODE])[MODE].value,
                configs(node2, BROKER, "2", [MODE])[MODE].config_source) == ("latest-append", DYNAMIC_BROKER)
        assert configs(node1, BROKER, "1", [MODE])[MODE].value == "window"
        p = new_sender(node1)
        broker.control.move_leader(p.topic, 0, 2)
        for sequence in range(3):
            assert p.outcome(sequence, wire=node2) == (NONE, sequence)
        assert p.outcome(0, wire=node2) == (DUPLICATE, -1)
