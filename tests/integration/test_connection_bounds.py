"""What one client can make the broker hold is bounded, as Kafka bounds it (real sockets, a real broker process)."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import psutil
import pytest
from confluent_kafka import Producer

from minibroker.protocol.messages import FetchRequest, MetadataRequest
from minibroker.testing.process import BrokerProcess, start_broker
from minibroker.testing.wire import WireClient

MB = 1024 * 1024
RECORD = b"x" * 1000


@pytest.fixture
def broker() -> Iterator[BrokerProcess]:
    process = start_broker()
    yield process
    process.stop()


def rss(process: BrokerProcess) -> int:
    return int(psutil.Process(process.pid).memory_info().rss)


def still_answers_metadata(process: BrokerProcess) -> bool:
    with WireClient(process.host, process.port, timeout=10) as other:
        return other.request(MetadataRequest(topics=None), 9).brokers[0].port == process.port


def fill(process: BrokerProcess, topic: str, records: int) -> None:
    producer = Producer({"bootstrap.servers": process.bootstrap_servers, "linger.ms": 20})
    for _ in range(records):
        producer.produce(topic, RECORD)
    assert producer.flush(30) == 0


def fetch_everything(topic: str) -> FetchRequest:
    return FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=MB, isolation_level=0,
                        topics=[FetchRequest.FetchTopic(topic=topic, partitions=[
                            FetchRequest.FetchTopic.FetchPartition(partition=0, fetch_offset=0,
                                                                   partition_max_bytes=MB)])])


def test_a_client_that_pipelines_fetches_without_reading_cannot_grow_the_broker(broker: BrokerProcess) -> None:
    fill(broker, "big", 1000)  # each Fetch answer is about 1 MB
    before = rss(broker)
    count = 400
    with WireClient(broker.host, broker.port, timeout=30) as greedy:
        frames = b"".join(greedy.encode_request(fetch_everything("big"), 11) for _ in range(count))
        greedy.sock.setblocking(False)
        sent = 0
        try:  # as much as the broker will take without reading a single answer
            while sent < len(frames):
                sent += greedy.sock.send(frames[sent:])
        except BlockingIOError:
            pass
        greedy.sock.setblocking(True)
        assert still_answers_metadata(broker)
        held = rss(broker) - before
        assert held < 64 * MB, f"the broker holds {held / MB:.0f} MB for one client's unread answers"
        # nothing is lost: every answer comes, in order, once the client reads (and sends the rest meanwhile)
        rest = threading.Thread(target=greedy.sock.sendall, args=(frames[sent:],))
        rest.start()
        for correlation_id in range(1, count + 1):
            answer_id, response = WireClient.decode_response(greedy.read_frame(), 1, 11)
            assert answer_id == correlation_id
            assert len(response.responses[0].partitions[0].records) > 900_000
        rest.join()


def long_poll(topic: str) -> FetchRequest:
    """A Fetch that waits a minute for a record of an empty partition."""
    return FetchRequest(replica_id=-1, max_wait_ms=60_000, min_bytes=1, max_bytes=MB, isolation_level=0,
                        topics=[FetchRequest.FetchTopic(topic=topic, partitions=[
                            FetchRequest.FetchTopic.FetchPartition(partition=0, fetch_offset=0,
                                                                   partition_max_bytes=MB)])])


def stream(sock: socket.socket, frame: bytes, count: int) -> int:
    """Send `frame` up to `count` times, until the broker has not read for 2 s; how many were sent whole."""
    sock.settimeout(2)
    sent = 0
    try:
        for _ in range(count):
            sock.sendall(frame)
            sent += 1
    except TimeoutError:
        pass
    return sent


def test_frames_streamed_behind_a_long_poll_are_held_no_more_than_one_read() -> None:
    # Kafka mutes a channel from a complete request until its answer is sent: what a client sends behind a
    # waiting Fetch stays in the socket, whatever its size; the broker holds at most one read's worth of it
    process = start_broker(f"socket.request.max.bytes={10 * MB}")
    try:
        process.create_topic("quiet", partitions=1)
        assert still_answers_metadata(process)
        before = rss(process)
        with WireClient(process.host, process.port, timeout=30) as client:
            client.send_raw(client.encode_request(long_poll("quiet"), 11))
            header = client.encode_request(MetadataRequest(topics=None), 9)[4:]
            big = struct.pack(">i", 10 * MB) + header + b"\0" * (10 * MB - len(header))
            sent = stream(client.sock, big, 30)
            assert still_answers_metadata(process)
            held = rss(process) - before
            assert held < 30 * MB, f"the broker holds {held / MB:.0f} MB of frames behind one long poll"
            assert sent < 30, "the broker read every frame behind the waiting Fetch"
        assert still_answers_metadata(process)  # the client is gone; so is what it sent
        assert rss(process) - before < 30 * MB
    finally:
        process.stop()


def test_announced_huge_frames_hold_only_the_bytes_sent(broker: BrokerProcess) -> None:
    before = rss(broker)
    sockets = []
    try:
        for _ in range(20):  # each announces 100 MB (socket.request.max.bytes) and sends 10 bytes of it
            sock = socket.create_connection((broker.host, broker.port))
            sock.sendall(struct.pack(">i", 100 * MB) + b"0123456789")
            sockets.append(sock)
        assert still_answers_metadata(broker)
        held = rss(broker) - before
        assert held < 32 * MB, f"the broker holds {held / MB:.0f} MB for 200 bytes of announced frames"
    finally:
        for sock in sockets:
            sock.close()


def test_idle_connections_cost_a_few_kilobytes(broker: BrokerProcess) -> None:
    still_answers_metadata(broker)
    before = rss(broker)
    sockets = [socket.create_connection((broker.host, broker.port)) for _ in range(1000)]
    try:
        assert still_answers_metadata(broker)  # also: all 1000 were accepted before this one was answered
        per_connection = (rss(broker) - before) / len(sockets)
        assert per_connection < 32 * 1024, f"{per_connection / 1024:.0f} KB per idle connection"
    finally:
        for sock in sockets:
            sock.close()
