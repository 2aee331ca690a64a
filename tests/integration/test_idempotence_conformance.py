"""Kafka's idempotent-producer rules at the wire level, with windows 5 and 20 (KIP-1269) and KIP-854 expiry."""

from __future__ import annotations

import time

import pytest

from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    CreateTopicsRequest,
    DescribeConfigsRequest,
    DescribeProducersRequest,
    IncrementalAlterConfigsRequest,
    InitProducerIdRequest,
)
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic, wait_until
from tests.integration.test_wire_protocol import create_topic, partition_response, produce_request

NOW = int(time.time() * 1000)
NEVER_RETURNED = {ErrorCode.DUPLICATE_SEQUENCE_NUMBER, ErrorCode.UNKNOWN_PRODUCER_ID}


class Producer:
    """Crafts batches for one producer id and sends them at a chosen Produce version."""

    def __init__(self, wire: WireClient, topic: str, topic_id, version: int = 14) -> None:
        self.wire = wire
        self.topic = topic
        self.topic_id = topic_id
        self.version = version
        init = wire.request(InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000), 4)
        assert init.error_code == 0
        self.producer_id = init.producer_id

    def send(self, sequence: int, count: int = 1, epoch: int = 0, timestamp: int = NOW, **batch_args):
        batch = records.build_batch([(None, b"r")] * count, timestamp=timestamp, producer_id=self.producer_id,
                                    producer_epoch=epoch, base_sequence=sequence, **batch_args)
        request = produce_request(self.topic, batch, version=self.version, topic_id=self.topic_id)
        response = partition_response(self.wire.request(request, self.version))
        assert response.error_code not in NEVER_RETURNED
        return response


def topic_with_window(wire: WireClient, window: int | None) -> tuple[str, object]:
    name = unique_topic(f"w{window}")
    configs = {} if window is None else {"producer.state.batches.to.retain": str(window)}
    return name, create_topic(wire, name, configs=configs)


def set_topic_window(wire: WireClient, topic: str, value: str | None) -> int:
    op = IncrementalAlterConfigsRequest.AlterConfigsResource.AlterableConfig(
        name="producer.state.batches.to.retain", config_operation=0 if value is not None else 1, value=value)
    resource = IncrementalAlterConfigsRequest.AlterConfigsResource(resource_type=2, resource_name=topic,
                                                                    configs=[op])
    response = wire.request(IncrementalAlterConfigsRequest(resources=[resource], validate_only=False), 1)
    return response.responses[0].error_code


@pytest.mark.parametrize("window", [5, 20])
def test_duplicate_within_window_returns_original_offset_and_timestamp(wire, window):
    topic, topic_id = topic_with_window(wire, window)
    producer = Producer(wire, topic, topic_id)
    first = producer.send(0, count=3, timestamp=NOW - 5000)
    for i in range(window - 1):
        assert producer.send(3 + i).error_code == 0
    again = producer.send(0, count=3, timestamp=NOW - 5000)
    assert again.error_code == 0
    assert again.base_offset == first.base_offset == 0
    assert again.log_append_time_ms == NOW - 5000  # retained timestamp, even on a CreateTime topic
    assert again.log_start_offset == 0
    assert again.producer_state_batches_to_retain == window
    assert producer.send(3 + window - 1).base_offset == 3 + window - 1  # nothing was appended by the retry


@pytest.mark.parametrize("window", [5, 20])
def test_retry_older_than_window_is_out_of_order(wire, window):
    topic, topic_id = topic_with_window(wire, window)
    producer = Producer(wire, topic, topic_id)
    for sequence in range(window + 1):
        assert producer.send(sequence).error_code == 0
    assert producer.send(1).base_offset == 1  # the oldest still retained
    assert producer.send(0).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


@pytest.mark.parametrize("version", [3, 9, 13, 14])
def test_gap_overlap_and_partial_duplicate_are_out_of_order(wire, version):
    topic, topic_id = topic_with_window(wire, 5)
    producer = Producer(wire, topic, topic_id, version=version)
    assert producer.send(0, count=4).error_code == 0
    assert producer.send(5).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER  # gap
    assert producer.send(2, count=4).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER  # overlap
    assert producer.send(0, count=2).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER  # not the same batch
    refused = producer.send(9)
    assert (refused.base_offset, refused.log_start_offset) == (-1, 0 if version >= 5 else -1)
    assert producer.send(4).base_offset == 4  # state did not move on the refusals


def test_epochs_new_must_start_at_zero_lower_is_fenced_new_clears_window(wire):
    topic, topic_id = topic_with_window(wire, 5)
    producer = Producer(wire, topic, topic_id)
    assert producer.send(0, epoch=3).error_code == 0
    assert producer.send(1, epoch=4).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert producer.send(0, epoch=2).error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert producer.send(0, epoch=4).base_offset == 1
    # the epoch-3 batch at sequence 0 is no longer a duplicate: the new epoch cleared the window
    assert producer.send(0, epoch=3).error_code == ErrorCode.INVALID_PRODUCER_EPOCH


def test_unknown_producer_starts_anywhere_and_sequence_wraps(wire):
    topic, topic_id = topic_with_window(wire, 5)
    producer = Producer(wire, topic, topic_id)
    assert producer.send(2**31 - 3, count=3).error_code == 0  # 2147483645..2147483647
    assert producer.send(0, count=2).error_code == 0  # wraps to 0
    assert producer.send(2**31 - 3, count=3).base_offset == 0  # still a retained duplicate


def test_refused_batch_leaves_producer_state_unchanged(wire):
    topic, topic_id = topic_with_window(wire, 5)
    producer = Producer(wire, topic, topic_id)
    assert producer.send(0).error_code == 0
    too_far_ahead = producer.send(1, timestamp=NOW + 10 * 3600_000)  # beyond message.timestamp.after.max.ms
    assert too_far_ahead.error_code == ErrorCode.INVALID_TIMESTAMP
    assert too_far_ahead.record_errors[0].batch_index == 0
    assert too_far_ahead.error_message == "One or more records have been rejected due to invalid timestamp"
    assert producer.send(1).base_offset == 1  # sequence 1 still expected


def test_dynamic_window_change_grows_and_trims_on_next_append(wire):
    topic, topic_id = topic_with_window(wire, 5)
    producer = Producer(wire, topic, topic_id)
    assert set_topic_window(wire, topic, "20") == 0
    for sequence in range(12):
        assert producer.send(sequence).producer_state_batches_to_retain == 20
    assert producer.send(0).base_offset == 0  # 12 retained under window 20
    assert set_topic_window(wire, topic, None) == 0  # DELETE: back to the broker default of 5
    assert producer.send(1).base_offset == 1  # not trimmed until the next append
    assert producer.send(12).producer_state_batches_to_retain == 5
    assert producer.send(2).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER  # trimmed to 8..12
    assert producer.send(8).base_offset == 8
    assert set_topic_window(wire, topic, "4") == ErrorCode.INVALID_CONFIG
    assert producer.send(13).producer_state_batches_to_retain == 5


def test_describe_configs_reports_window_source_and_synonyms(broker_factory):
    broker = broker_factory("log.producer.state.batches.to.retain=8")
    with WireClient(broker.host, broker.port) as wire:
        topic, _ = topic_with_window(wire, None)
        overridden, _ = topic_with_window(wire, 20)
        resources = [DescribeConfigsRequest.DescribeConfigsResource(
            resource_type=2, resource_name=name, configuration_keys=["producer.state.batches.to.retain"])
            for name in (topic, overridden)]
        response = wire.request(DescribeConfigsRequest(resources=resources, include_synonyms=True,
                                                       include_documentation=False), 4)
        plain, override = (result.configs[0] for result in response.results)
        assert (plain.value, plain.config_source) == ("8", 4)  # STATIC_BROKER_CONFIG
        assert [(s.name, s.value, s.source) for s in plain.synonyms] == [
            ("log.producer.state.batches.to.retain", "8", 4), ("log.producer.state.batches.to.retain", "5", 5)]
        assert (override.value, override.config_source) == ("20", 1)  # DYNAMIC_TOPIC_CONFIG
        assert [s.source for s in override.synonyms] == [1, 4, 5]


def test_create_topic_refuses_non_integer_window(wire):
    topic = CreateTopicsRequest.CreatableTopic(
        name=unique_topic("bad"), num_partitions=1, replication_factor=1, assignments=[],
        configs=[CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(
            name="producer.state.batches.to.retain", value="ten")])
    result = wire.request(CreateTopicsRequest(topics=[topic], timeout_ms=1000, validate_only=False), 7).topics[0]
    assert result.error_code == ErrorCode.INVALID_CONFIG
    assert "producer.state.batches.to.retain" in result.error_message and "ten" in result.error_message


def test_describe_producers_lists_active_producer(wire):
    topic, topic_id = topic_with_window(wire, 5)
    producer = Producer(wire, topic, topic_id)
    producer.send(0, count=5, timestamp=NOW - 1)
    request = DescribeProducersRequest(topics=[DescribeProducersRequest.TopicRequest(name=topic,
                                                                                     partition_indexes=[0])])
    partition = wire.request(request, 0).topics[0].partitions[0]
    assert partition.error_code == 0
    [state] = partition.active_producers
    assert (state.producer_id, state.producer_epoch, state.last_sequence) == (producer.producer_id, 0, 4)
    assert (state.last_timestamp, state.current_txn_start_offset) == (NOW - 1, -1)


def test_idle_producer_expires_and_is_then_unknown(broker_factory):
    broker = broker_factory("producer.id.expiration.ms=300", "producer.id.expiration.check.interval.ms=100")
    with WireClient(broker.host, broker.port) as wire:
        topic, topic_id = topic_with_window(wire, 5)
        producer = Producer(wire, topic, topic_id)
        stamp = int(time.time() * 1000)
        assert producer.send(0, timestamp=stamp).error_code == 0
        assert producer.send(7, timestamp=stamp).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
        request = DescribeProducersRequest(topics=[DescribeProducersRequest.TopicRequest(
            name=topic, partition_indexes=[0])])
        wait_until(lambda: not wire.request(request, 0).topics[0].partitions[0].active_producers, 10,
                   "producer state expired", interval=0.2)
        assert producer.send(7, timestamp=int(time.time() * 1000)).error_code == 0  # unknown again: any sequence
