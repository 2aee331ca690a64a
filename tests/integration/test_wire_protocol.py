"""Wire-level behaviour of a real broker process: framing, versions, Produce validation, bad input."""

from __future__ import annotations

import socket
import struct
import uuid

import pytest

from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    ApiVersionsRequest,
    CreateTopicsRequest,
    FetchRequest,
    MetadataRequest,
    ProduceRequest,
    ProduceResponse,
)
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic, wait_until


def create_topic(wire: WireClient, name: str, partitions: int = 1, configs: dict[str, str] | None = None):
    topic = CreateTopicsRequest.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=1, assignments=[],
        configs=[CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(name=k, value=v)
                 for k, v in (configs or {}).items()],
    )
    response = wire.request(CreateTopicsRequest(topics=[topic], timeout_ms=5000, validate_only=False), 7)
    assert response.topics[0].error_code == 0, response
    return response.topics[0].topic_id


def produce_request(topic: str, batch: bytes, acks: int = -1, version: int = 9, topic_id=None, partition: int = 0):
    data = ProduceRequest.TopicProduceData(
        partition_data=[ProduceRequest.TopicProduceData.PartitionProduceData(index=partition, records=batch)],
    )
    if version >= 13:
        data.topic_id = topic_id
    else:
        data.name = topic
    return ProduceRequest(transactional_id=None, acks=acks, timeout_ms=5000, topic_data=[data])


def partition_response(response):
    return response.responses[0].partition_responses[0]


def fetch_all(wire: WireClient, topic: str, offset: int = 0) -> bytes:
    request = FetchRequest(
        replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=10_000_000, isolation_level=0,
        topics=[FetchRequest.FetchTopic(topic=topic, partitions=[FetchRequest.FetchTopic.FetchPartition(
            partition=0, fetch_offset=offset, partition_max_bytes=10_000_000)])],
    )
    response = wire.request(request, 11)
    data = response.responses[0].partitions[0]
    assert data.error_code == 0
    return data.records or b""


def assert_broker_still_serves(broker) -> None:
    with WireClient(broker.host, broker.port) as other:
        response = other.request(ApiVersionsRequest(), 0)
        assert response.error_code == 0


BATCH = records.build_batch([(b"k", b"v")], timestamp=1_700_000_000_000)


# -- framing and versions ---------------------------------------------------

def test_requests_pipelined_on_one_connection_are_answered_in_order(wire, broker):
    frames = b"".join(wire.encode_request(MetadataRequest(topics=[]), 1, correlation_id=i) for i in range(1, 51))
    wire.send_raw(frames)
    seen = [struct.unpack_from(">i", wire.read_frame())[0] for _ in range(50)]
    assert seen == list(range(1, 51))


def test_api_versions_at_unsupported_version_gets_v0_fallback(wire):
    wire.send_raw(_raw_frame(18, 99, 77, b"\x00"))
    frame = wire.read_frame()
    correlation_id, error_code, count = struct.unpack_from(">ihi", frame)
    assert correlation_id == 77
    assert error_code == ErrorCode.UNSUPPORTED_VERSION
    assert count == 1
    assert struct.unpack_from(">hhh", frame, 10) == (18, 0, 4)
    assert len(frame) == 16  # header v0, v0 body: nothing else


def test_api_versions_advertises_produce_from_zero_and_fetch_from_four(wire):
    response = wire.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
    ranges = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert ranges[0] == (0, 14)
    assert ranges[1] == (4, 18)
    assert ranges[18] == (0, 4)


def test_api_versions_with_invalid_software_name_is_invalid_request(wire):
    request = ApiVersionsRequest(client_software_name="bad name!", client_software_version="1")
    wire.send_raw(wire.encode_request(request, 3))
    frame = wire.read_frame()
    # header v0, then a v3 body: error_code, an empty compact array, throttle time, no tags
    assert struct.unpack_from(">h", frame, 4)[0] == ErrorCode.INVALID_REQUEST
    assert frame[6:] == b"\x01" + b"\x00" * 4 + b"\x00"


def _raw_frame(api_key: int, version: int, correlation_id: int, body: bytes, client_id: bytes = b"x") -> bytes:
    header = struct.pack(">hhih", api_key, version, correlation_id, len(client_id)) + client_id
    return struct.pack(">i", len(header) + len(body)) + header + body


@pytest.mark.parametrize("frame", [
    pytest.param(_raw_frame(9999, 0, 1, b""), id="unknown-api-key"),
    pytest.param(_raw_frame(3, 99, 1, b""), id="unsupported-metadata-version"),
    pytest.param(_raw_frame(0, 2, 1, b"\x00" * 20), id="produce-v2-refused"),
    pytest.param(struct.pack(">i", 2**31 - 1) + b"\x00" * 16, id="oversized-frame-length"),
    pytest.param(struct.pack(">i", -5) + b"\x00" * 16, id="negative-frame-length"),
    pytest.param(_raw_frame(3, 12, 1, b"\xff\xff\xff\xff\xff\xff\xff"), id="garbage-body"),
    pytest.param(struct.pack(">i", 3) + b"\x00\x03\x00", id="frame-shorter-than-header"),
])
def test_bad_frame_closes_only_that_connection(wire, broker, frame):
    wire.send_raw(frame)
    assert wire.is_closed_by_peer()
    assert broker.alive()
    assert_broker_still_serves(broker)


def test_truncated_frame_is_not_answered_and_broker_goes_on(broker):
    with WireClient(broker.host, broker.port) as client:
        frame = client.encode_request(MetadataRequest(topics=[]), 1)
        client.send_raw(frame[:-3])
        assert not client.is_closed_by_peer(timeout=0.5)  # still waiting for the rest
    assert_broker_still_serves(broker)


def test_oversized_frame_length_is_refused_without_allocating(broker_factory):
    small = broker_factory("socket.request.max.bytes=1000")
    with WireClient(small.host, small.port) as client:
        client.send_raw(struct.pack(">i", 1001))
        assert client.is_closed_by_peer()
    with WireClient(small.host, small.port) as client:
        assert client.request(MetadataRequest(topics=[]), 1).brokers


def test_raw_garbage_bytes_close_connection(broker):
    with socket.create_connection((broker.host, broker.port), timeout=5) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(5)
        assert sock.recv(10) == b""
    assert_broker_still_serves(broker)


# -- Produce ------------------------------------------------------------------

def test_produce_v14_carries_batches_to_retain_tag_and_v13_does_not(wire):
    topic = unique_topic("kip1269")
    topic_id = create_topic(wire, topic, configs={"producer.state.batches.to.retain": "20"})
    v14 = wire.request(produce_request(topic, BATCH, version=14, topic_id=topic_id), 14)
    assert partition_response(v14).error_code == 0
    assert partition_response(v14).producer_state_batches_to_retain == 20
    # the raw bytes carry tag 1 = 20 inside the partition response
    wire.send_raw(wire.encode_request(produce_request(topic, BATCH, version=14, topic_id=topic_id), 14))
    assert b"\x01\x01\x04\x00\x00\x00\x14" in wire.read_frame()
    wire.send_raw(wire.encode_request(produce_request(topic, BATCH, version=13, topic_id=topic_id), 13))
    raw13 = wire.read_frame()
    assert b"\x01\x04\x00\x00\x00\x14" not in raw13
    decoded = ProduceResponse.decode(raw13[5:], version=13)
    assert partition_response(decoded).error_code == 0


def test_produce_v14_omits_tag_when_window_is_default(wire):
    topic = unique_topic("kip1269-default")
    topic_id = create_topic(wire, topic)
    wire.send_raw(wire.encode_request(produce_request(topic, BATCH, version=14, topic_id=topic_id), 14))
    frame = wire.read_frame()
    response = ProduceResponse.decode(frame[5:], version=14)
    assert partition_response(response).producer_state_batches_to_retain == 5
    wire.send_raw(wire.encode_request(produce_request(topic, BATCH, version=13, topic_id=topic_id), 13))
    frame13 = wire.read_frame()
    # identical apart from correlation id and offsets: same length means no tag written
    assert len(frame) == len(frame13)


def test_acks_zero_gets_no_response(wire):
    topic = unique_topic("acks0")
    create_topic(wire, topic)
    wire.send_raw(wire.encode_request(produce_request(topic, BATCH, acks=0), 9))
    response = wire.request(MetadataRequest(topics=[]), 1)  # answered next, nothing before it
    assert response.brokers
    assert fetch_all(wire, topic)  # and the record was appended


def test_acks_zero_failure_closes_connection(wire):
    topic = unique_topic("acks0-bad")
    create_topic(wire, topic)
    corrupt = bytearray(BATCH)
    corrupt[-1] ^= 0xFF
    wire.send_raw(wire.encode_request(produce_request(topic, bytes(corrupt), acks=0), 9))
    assert wire.is_closed_by_peer()


def _with_header_field(batch: bytes, offset: int, fmt: str, value: int, fix_crc: bool = True) -> bytes:
    out = bytearray(batch)
    struct.pack_into(fmt, out, offset, value)
    if fix_crc:
        struct.pack_into(">I", out, 17, records.compute_crc(out))
    return bytes(out)


CORRUPT_CRC = _with_header_field(BATCH, 17, ">I", 12345, fix_crc=False)
COUNT_MISMATCH = _with_header_field(BATCH, 57, ">i", 2)  # recordCount 2, lastOffsetDelta 0
CONTROL_BATCH = _with_header_field(BATCH, 21, ">h", records.ATTR_CONTROL)
ZSTD_BATCH = records.build_batch([(b"k", b"v")], timestamp=1_700_000_000_000, compression=records.COMPRESSION_ZSTD)


@pytest.mark.parametrize(("batch", "version", "acks", "code"), [
    pytest.param(CORRUPT_CRC, 9, -1, ErrorCode.CORRUPT_MESSAGE, id="corrupt-crc"),
    pytest.param(COUNT_MISMATCH, 9, -1, ErrorCode.INVALID_RECORD, id="record-count-mismatch"),
    pytest.param(CONTROL_BATCH, 9, -1, ErrorCode.INVALID_RECORD, id="control-batch-from-client"),
    pytest.param(BATCH, 9, 2, ErrorCode.INVALID_REQUIRED_ACKS, id="acks-2"),
    pytest.param(BATCH, 9, -2, ErrorCode.INVALID_REQUIRED_ACKS, id="acks-minus-2"),
    pytest.param(ZSTD_BATCH, 6, -1, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, id="zstd-below-v7"),
    pytest.param(BATCH + BATCH, 9, -1, ErrorCode.INVALID_RECORD, id="two-batches-in-one-partition"),
])
def test_refused_batch_appends_nothing(wire, batch, version, acks, code):
    topic = unique_topic("refused")
    create_topic(wire, topic)
    response = wire.request(produce_request(topic, batch, acks=acks, version=version), version)
    part = partition_response(response)
    assert part.error_code == code
    assert part.base_offset == -1
    assert fetch_all(wire, topic) == b""
    # the connection goes on
    ok = wire.request(produce_request(topic, BATCH), 9)
    assert partition_response(ok).error_code == 0
    assert partition_response(ok).base_offset == 0


MAGIC_1_MESSAGE = struct.pack(">qi", 0, 22) + struct.pack(">Ibbqii", 0, 1, 0, 1_700_000_000_000, -1, 0)


@pytest.mark.parametrize(("batch", "version", "code"), [
    pytest.param(b"", 9, ErrorCode.INVALID_RECORD, id="no-batch"),
    pytest.param(BATCH[:40], 9, ErrorCode.INVALID_RECORD, id="only-part-of-a-batch"),
    pytest.param(MAGIC_1_MESSAGE, 3, ErrorCode.INVALID_RECORD, id="magic-1-at-v3"),
    pytest.param(ZSTD_BATCH, 6, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, id="zstd-below-v7"),
    pytest.param(BATCH + BATCH, 9, ErrorCode.INVALID_RECORD, id="two-batches"),
])
def test_records_produce_request_validation_refuses_are_answered_before_the_append(wire, batch, version, code):
    """KafkaApis applies ProduceRequest.validateRecords before ReplicaManager: the answer is a bare
    PartitionResponse(error), no offsets and no log start offset, and it wins over an invalid acks."""
    topic = unique_topic("invalid-records")
    create_topic(wire, topic)
    for acks in (-1, 2):
        part = partition_response(wire.request(produce_request(topic, batch, acks=acks, version=version), version))
        assert (part.error_code, part.base_offset, part.log_start_offset, part.error_message) == (code, -1, -1, None)
    assert fetch_all(wire, topic) == b""


def test_batch_over_max_message_bytes_is_message_too_large(wire):
    topic = unique_topic("too-large")
    create_topic(wire, topic, configs={"max.message.bytes": "1000"})
    big = records.build_batch([(None, b"x" * 2000)], timestamp=1_700_000_000_000)
    part = partition_response(wire.request(produce_request(topic, big), 9))
    assert part.error_code == ErrorCode.MESSAGE_TOO_LARGE
    assert part.log_start_offset == -1
    assert fetch_all(wire, topic) == b""


def test_unknown_topic_id_at_v13(wire):
    response = wire.request(produce_request("", BATCH, version=13, topic_id=uuid.uuid4()), 13)
    assert partition_response(response).error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_produce_to_unknown_topic_name_is_unknown_topic_or_partition(wire):
    response = wire.request(produce_request(unique_topic("nope"), BATCH), 9)
    assert partition_response(response).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_create_topics_with_invalid_name_is_invalid_topic_exception(wire):
    bad = CreateTopicsRequest.CreatableTopic(name="bad/name", num_partitions=1, replication_factor=1,
                                             assignments=[], configs=[])
    response = wire.request(CreateTopicsRequest(topics=[bad], timeout_ms=1000, validate_only=False), 7)
    assert response.topics[0].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert "bad/name" in response.topics[0].error_message


def test_create_topics_below_window_minimum_is_invalid_config(wire):
    topic = CreateTopicsRequest.CreatableTopic(
        name=unique_topic("small-window"), num_partitions=1, replication_factor=1, assignments=[],
        configs=[CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(
            name="producer.state.batches.to.retain", value="4")],
    )
    response = wire.request(CreateTopicsRequest(topics=[topic], timeout_ms=1000, validate_only=False), 7)
    result = response.topics[0]
    assert result.error_code == ErrorCode.INVALID_CONFIG
    assert "producer.state.batches.to.retain" in result.error_message
    assert "4" in result.error_message and "5" in result.error_message


def test_fetch_long_poll_is_woken_by_append(broker, wire):
    topic = unique_topic("longpoll")
    create_topic(wire, topic)
    request = FetchRequest(
        replica_id=-1, max_wait_ms=10_000, min_bytes=1, max_bytes=1_000_000, isolation_level=0,
        topics=[FetchRequest.FetchTopic(topic=topic, partitions=[FetchRequest.FetchTopic.FetchPartition(
            partition=0, fetch_offset=0, partition_max_bytes=1_000_000)])],
    )
    wire.send_raw(wire.encode_request(request, 11))
    with WireClient(broker.host, broker.port) as producer:
        assert partition_response(producer.request(produce_request(topic, BATCH), 9)).error_code == 0
    wire.sock.settimeout(5)  # far below max_wait_ms: only the append can have answered it
    _, response = WireClient.decode_response(wire.read_frame(), 1, 11)
    assert response.responses[0].partitions[0].records


def test_fetch_long_poll_answers_empty_at_max_wait(wire):
    topic = unique_topic("longpoll-empty")
    create_topic(wire, topic)
    request = FetchRequest(
        replica_id=-1, max_wait_ms=200, min_bytes=1, max_bytes=1_000_000, isolation_level=0,
        topics=[FetchRequest.FetchTopic(topic=topic, partitions=[FetchRequest.FetchTopic.FetchPartition(
            partition=0, fetch_offset=0, partition_max_bytes=1_000_000)])],
    )
    response = wire.request(request, 11)
    assert response.responses[0].partitions[0].error_code == 0
    assert not response.responses[0].partitions[0].records


def test_retention_ms_drops_old_batches_on_the_check_tick(broker_factory):
    import time

    from minibroker.protocol.messages import ListOffsetsRequest

    broker = broker_factory("log.retention.check.interval.ms=100")
    with WireClient(broker.host, broker.port) as wire:
        topic = unique_topic("retention")
        create_topic(wire, topic, configs={"retention.ms": "60000"})
        now = int(time.time() * 1000)
        old = records.build_batch([(None, b"old")], timestamp=now - 3_600_000)
        new = records.build_batch([(None, b"new")], timestamp=now)
        assert partition_response(wire.request(produce_request(topic, old), 9)).error_code == 0
        assert partition_response(wire.request(produce_request(topic, new), 9)).error_code == 0
        request = ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[ListOffsetsRequest.ListOffsetsTopic(
            name=topic, partitions=[ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(
                partition_index=0, timestamp=-2)])])
        earliest = wait_until(lambda: wire.request(request, 7).topics[0].partitions[0].offset, 10,
                              "retention deleted the old batch", interval=0.1)
        assert earliest == 1
        assert records.read_header(fetch_all(wire, topic, offset=1)).base_offset == 1


def test_acks_all_below_min_insync_replicas_is_not_enough_replicas(wire):
    topic = unique_topic("min-isr")
    create_topic(wire, topic, configs={"min.insync.replicas": "2"})
    part = partition_response(wire.request(produce_request(topic, BATCH, acks=-1), 9))
    assert part.error_code == ErrorCode.NOT_ENOUGH_REPLICAS
    assert fetch_all(wire, topic) == b""
    assert partition_response(wire.request(produce_request(topic, BATCH, acks=1), 9)).base_offset == 0
