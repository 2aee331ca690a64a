"""Kafka's connection limits and idle expiry, over real sockets."""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import Iterator

import pytest

from minibroker.core.clock import ManualClock
from minibroker.core.config import SET, ConfigError
from minibroker.protocol.messages import ApiVersionsRequest, MetadataRequest
from minibroker.protocol.records import split_batches
from minibroker.testing.embedded import BrokerThread
from minibroker.testing.process import BrokerProcess, start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import wait_until
from tests.integration.test_wire_protocol import BATCH, fetch_all, partition_response, produce_request

API_VERSIONS = ApiVersionsRequest(client_software_name="limits", client_software_version="1")


def answers(host: str, port: int) -> bool:
    """A new connection gets an ApiVersions answer (False: the broker closed it)."""
    try:
        with WireClient(host, port, timeout=10) as wire:
            return bool(wire.request(API_VERSIONS, 3).error_code == 0)
    except (ConnectionError, OSError):
        return False


@pytest.fixture
def limited(request: pytest.FixtureRequest) -> Iterator[BrokerProcess]:
    process = start_broker(*request.param)
    yield process
    process.stop()


@pytest.mark.parametrize("limited", [("max.connections.per.ip=3",),
                                     ("max.connections.per.ip.overrides=127.0.0.1:3",),
                                     ("max.connections=3",)], indirect=True)
def test_a_connection_over_the_limit_is_closed_and_logged(limited: BrokerProcess) -> None:
    held = [WireClient(limited.host, limited.port) for _ in range(3)]
    try:
        for wire in held:
            assert wire.request(API_VERSIONS, 3).error_code == 0
        assert not answers(limited.host, limited.port)
        assert "Rejected connection from /127.0.0.1" in limited.log_text()
        held.pop().close()
        deadline = 50
        while not answers(limited.host, limited.port) and deadline:  # the broker sees the close a moment later
            deadline -= 1
        assert deadline, "a freed slot was not given to a new connection"
    finally:
        for wire in held:
            wire.close()


def test_an_override_lifts_the_per_ip_limit_for_that_address() -> None:
    config = {"max.connections.per.ip": "1", "max.connections.per.ip.overrides": "localhost:4"}
    with BrokerThread(config=config) as broker:
        held = [WireClient(broker.host, broker.port) for _ in range(4)]
        try:
            assert all(wire.request(API_VERSIONS, 3).error_code == 0 for wire in held)
            assert not answers(broker.host, broker.port)
        finally:
            for wire in held:
                wire.close()


def test_a_malformed_override_is_refused_at_start() -> None:
    with pytest.raises(ConfigError, match="max.connections.per.ip.overrides"):
        BrokerThread(config={"max.connections.per.ip.overrides": "localhost:many"})


def test_zero_connections_per_ip_without_overrides_is_refused_as_kafka_does() -> None:
    with pytest.raises(ConfigError, match="requirement failed: max.connections.per.ip can be set to zero only if "
                                          "max.connections.per.ip.overrides property is set."):
        BrokerThread(config={"max.connections.per.ip": "0"})
    with BrokerThread(config={"max.connections.per.ip": "0", "max.connections.per.ip.overrides": "localhost:1"}) as b:
        assert answers(b.host, b.port)


def test_an_idle_connection_is_closed_after_connections_max_idle_ms() -> None:
    clock = ManualClock(1_000_000)
    with BrokerThread(clock=clock, config={"connections.max.idle.ms": "60000"}) as broker:
        with WireClient(broker.host, broker.port) as idle, WireClient(broker.host, broker.port) as busy:
            assert idle.request(API_VERSIONS, 3).error_code == 0
            broker.call(clock.advance, 59_000)
            assert busy.request(API_VERSIONS, 3).error_code == 0  # activity: its idle time restarts
            broker.call(clock.advance, 1_001)
            assert idle.is_closed_by_peer(timeout=5)
            assert not busy.is_closed_by_peer(timeout=0.5)
            assert busy.request(API_VERSIONS, 3).error_code == 0


def test_listen_backlog_size_is_kafkas_and_settable() -> None:
    with BrokerThread(config={"socket.listen.backlog.size": "7"}) as broker:
        assert broker.cluster.config["socket.listen.backlog.size"] == 7
        assert answers(broker.host, broker.port)


async def _metadata_and_produce(host: str, port: int, topic: str, correlation_base: int,
                                handshakes: asyncio.Semaphore, all_answered: asyncio.Barrier) -> bool:
    """Metadata, then an acks=1 Produce, pipelined on a new connection that stays open until every connection
    has its answers; True when the Produce succeeded."""
    writer = None
    try:
        async with handshakes:
            reader, writer = await asyncio.open_connection(host, port)
        encoder = WireClient.__new__(WireClient)  # its framing only, no socket of its own
        encoder.client_id, encoder._correlation_id = "many", correlation_base
        writer.write(encoder.encode_request(MetadataRequest(topics=None), 9)
                     + encoder.encode_request(produce_request(topic, BATCH, acks=1), 9))
        await writer.drain()
        frames = []
        for _ in range(2):
            size = struct.unpack(">i", await reader.readexactly(4))[0]
            frames.append(await reader.readexactly(size))
        _, produced = WireClient.decode_response(frames[1], 0, 9)
        return bool(partition_response(produced).error_code == 0)
    finally:
        await all_answered.wait()  # so all 5,000 are open at once, not one after another
        if writer is not None:
            writer.close()


def test_five_thousand_concurrent_connections_all_get_metadata_and_produce() -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 12_000:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 12_000), hard))
    # A burst of connects needs the listen backlog Kafka's socket.listen.backlog.size is for: at its default of
    # 50, 5,000 SYNs at once overflow the kernel's accept queue for any broker, and Linux answers part of the
    # overflow with SYN cookies that can fail with a reset (TcpExtSyncookiesFailed), as CI saw. The kernel caps
    # it at net.core.somaxconn (4096); handshakes are let out 1,000 at a time so the queue never overflows.
    process = start_broker("socket.listen.backlog.size=5000")
    try:
        process.create_topic("many", partitions=1)

        async def everyone() -> list[bool | BaseException]:
            handshakes, all_answered = asyncio.Semaphore(1000), asyncio.Barrier(5000)
            return await asyncio.gather(*(_metadata_and_produce(process.host, process.port, "many", i * 10,
                                                                handshakes, all_answered)
                                          for i in range(5000)), return_exceptions=True)

        results = asyncio.run(asyncio.wait_for(everyone(), timeout=120))
        failures = [r for r in results if r is not True]
        assert not failures, f"{len(failures)} of 5000 failed, e.g. {failures[:3]}"
        with WireClient(process.host, process.port) as wire:
            assert len(split_batches(fetch_all(wire, "many"))) == 5000
    finally:
        process.stop()


def test_max_connections_set_dynamically_applies_to_the_next_connection() -> None:
    with BrokerThread() as broker, WireClient(broker.host, broker.port) as first:
        assert first.request(API_VERSIONS, 3).error_code == 0
        # as an IncrementalAlterConfigs of the cluster-wide default would (tests/integration/test_config_fidelity.py)
        broker.call(broker.cluster.config.incremental_alter_dynamic, None, [("max.connections", SET, "2")])
        with WireClient(broker.host, broker.port) as second:
            assert second.request(API_VERSIONS, 3).error_code == 0
            assert not answers(broker.host, broker.port)
        assert first.request(API_VERSIONS, 3).error_code == 0


def test_queued_max_request_bytes_holds_back_a_frame_until_memory_is_free() -> None:
    a, b = (WireClient.__new__(WireClient) for _ in range(2))
    for encoder in (a, b):
        encoder.client_id, encoder._correlation_id = "x" * 300, 0
    frame = a.encode_request(API_VERSIONS, 3)
    b_frame = b.encode_request(API_VERSIONS, 3)
    size = len(frame) - 4  # the pool holds one such frame at a time, not two
    config = {"socket.request.max.bytes": str(size), "queued.max.request.bytes": str(size + size // 2)}
    with BrokerThread(config=config) as broker:
        with WireClient(broker.host, broker.port) as first, WireClient(broker.host, broker.port) as second:
            first.send_raw(frame[:-10])
            wait_until(lambda: broker.call(lambda: reserved(broker)) == size)
            second.send_raw(b_frame[:-10])  # its size prefix is read: the pool has no room for its frame
            wait_until(lambda: broker.call(lambda: any(c.state.buffered_bytes and not c.state.reserved_request_bytes
                                                       for c in broker.broker.connections)))
            second.send_raw(b_frame[-10:])  # complete, but no longer read
            time.sleep(0.5)  # a generous moment in which an answer would come if it were read
            second.sock.setblocking(False)
            with pytest.raises(BlockingIOError):
                second.sock.recv(1)
            second.sock.setblocking(True)
            first.send_raw(frame[-10:])
            assert WireClient.decode_response(first.read_frame(), 18, 3)[1].error_code == 0
            assert WireClient.decode_response(second.read_frame(), 18, 3)[1].error_code == 0
            wait_until(lambda: broker.call(lambda: reserved(broker)) == 0)


def reserved(broker: BrokerThread) -> int:
    return sum(connection.state.reserved_request_bytes for connection in broker.broker.connections)


def test_queued_max_request_bytes_below_the_request_size_is_refused_as_kafka_does() -> None:
    with pytest.raises(ConfigError, match="requirement failed: queued.max.request.bytes must be larger or equal "
                                          "to socket.request.max.bytes"):
        BrokerThread(config={"queued.max.request.bytes": "1000"})


def test_a_long_poll_of_a_closed_connection_stops_watching_the_log_at_its_deadline() -> None:
    from minibroker.protocol.messages import FetchRequest

    with BrokerThread() as broker:
        broker.create_topic("quiet", partitions=1)
        log = broker.cluster.topics["quiet"].partitions[0].log
        partition = FetchRequest.FetchTopic.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=100_000)
        request = FetchRequest(replica_id=-1, max_wait_ms=300, min_bytes=1, max_bytes=1_000_000, isolation_level=0,
                               topics=[FetchRequest.FetchTopic(topic="quiet", partitions=[partition])],
                               forgotten_topics_data=[], rack_id="")
        with WireClient(broker.host, broker.port) as wire:
            wire.send_raw(wire.encode_request(request, 12))
            wait_until(lambda: broker.call(lambda: len(log._watchers)) == 1)
        # the client is gone before the answer; the wait still ends at max_wait_ms
        wait_until(lambda: broker.call(lambda: len(log._watchers)) == 0)


def test_accept_errors_are_logged_and_the_listener_accepts_again_once_descriptors_are_free() -> None:
    import os
    import resource
    import socket

    process = start_broker()
    try:
        assert answers(process.host, process.port)
        in_use = len(os.listdir(f"/proc/{process.pid}/fd"))
        _soft, hard = resource.prlimit(process.pid, resource.RLIMIT_NOFILE)
        resource.prlimit(process.pid, resource.RLIMIT_NOFILE, (in_use + 50, hard))  # out of descriptors at ~50
        silent = []
        try:
            for _ in range(80):  # the kernel completes them all; the broker can accept only some
                silent.append(socket.create_connection((process.host, process.port), timeout=10))
            wait_until(lambda: "Error while accepting connection" in process.log_text(), timeout=20)
            assert "Too many open files" in process.log_text()
        finally:
            for sock in silent:
                sock.close()
        # the descriptors are free again: the listener still serves (it waited, it was not closed)
        wait_until(lambda: answers(process.host, process.port), timeout=20)
    finally:
        process.stop()

