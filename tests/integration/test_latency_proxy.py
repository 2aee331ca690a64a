"""The latency-injecting TCP proxy: bytes intact and in order, delayed both ways, closes passed on; a producer
through it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from minibroker.client import Producer
from minibroker.client.stamping import read_stamp, stamp
from minibroker.protocol import records
from minibroker.testing.latency_proxy import LatencyProxy
from minibroker.testing.process import start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import pinned_bytes, unique_topic
from tests.integration.test_wire_protocol import create_topic, fetch_all

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    await close(writer)


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Handler, float], Awaitable[LatencyProxy]]]:
    """Start a TCP server running `handler` behind a proxy with the given one-way delay."""
    started: list[tuple[asyncio.Server, LatencyProxy]] = []
    server_writers: list[asyncio.StreamWriter] = []

    async def start(handler: Handler, one_way_delay_ms: float = 0.0) -> LatencyProxy:
        async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            server_writers.append(writer)
            await handler(reader, writer)

        server = await asyncio.start_server(tracked, "127.0.0.1", 0)
        proxy = LatencyProxy("127.0.0.1", 0, target=("127.0.0.1", server.sockets[0].getsockname()[1]),
                             one_way_delay_ms=one_way_delay_ms)
        await proxy.start()
        started.append((server, proxy))
        return proxy

    yield start
    for server, proxy in started:
        await proxy.stop()
        server.close()
    for writer in server_writers:  # a handler may still wait for an end of stream the test did not wait for
        await close(writer)


async def close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def test_bytes_pass_intact_and_in_order_through_an_echo(serve):
    proxy = await serve(echo, 5)
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    sent = pinned_bytes(3_000_000, seed=1)
    for start in range(0, len(sent), 70_001):  # odd-sized writes, many chunks in flight at once
        writer.write(sent[start:start + 70_001])
    await writer.drain()
    received = await reader.readexactly(len(sent))
    await close(writer)
    assert received == sent
    assert proxy.bytes_received == (len(sent), len(sent))


async def test_both_directions_stream_at_once(serve):
    from_server = pinned_bytes(2_000_000, seed=2)
    got_by_server = bytearray()

    async def talker(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(from_server)
        while data := await reader.read(65536):
            got_by_server.extend(data)
        await close(writer)

    proxy = await serve(talker, 2)
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    from_client = pinned_bytes(2_500_000, seed=3)
    writer.write(from_client)
    writer.write_eof()
    got_by_client = await reader.read()  # until the server's close arrives
    await close(writer)
    assert got_by_client == from_server
    assert bytes(got_by_server) == from_client


async def test_a_round_trip_takes_at_least_the_configured_rtt(serve):
    proxy = await serve(echo, 40)
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    for i in range(3):
        begin = time.monotonic()
        writer.write(b"ping %d" % i)
        assert await reader.readexactly(6) == b"ping %d" % i
        assert time.monotonic() - begin >= 0.080
    await close(writer)


async def test_each_direction_is_delayed_by_the_one_way_delay(serve):
    arrived: asyncio.Future[float] = asyncio.get_running_loop().create_future()

    async def stamp_arrival(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readexactly(5)
        arrived.set_result(time.monotonic())
        writer.write(b"reply")
        await reader.read()
        await close(writer)

    proxy = await serve(stamp_arrival, 30)
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    sent_at = time.monotonic()
    writer.write(b"hello")
    assert await reader.readexactly(5) == b"reply"
    replied_at = time.monotonic()
    assert await arrived - sent_at >= 0.030
    assert replied_at - await arrived >= 0.030
    await close(writer)


async def test_a_client_close_reaches_the_server_after_its_pending_data(serve):
    received: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    async def collect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received.set_result(await reader.read())  # read() returns at end of stream
        await close(writer)

    proxy = await serve(collect, 20)
    _, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    payload = pinned_bytes(500_000, seed=4)
    writer.write(payload)
    writer.close()  # at once: the data is still on its way through the proxy
    assert await asyncio.wait_for(received, 10) == payload


async def test_a_server_close_reaches_the_client_after_its_pending_data(serve):
    payload = pinned_bytes(300_000, seed=5)

    async def say_and_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(payload)
        await writer.drain()
        await close(writer)

    proxy = await serve(say_and_close, 20)
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    assert await asyncio.wait_for(reader.read(), 10) == payload  # everything, then end of stream
    await close(writer)


async def test_stop_drops_open_connections_and_stops_listening(serve):
    proxy = await serve(echo, 0)
    port = proxy.port
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"x")
    assert await reader.readexactly(1) == b"x"
    await proxy.stop()
    with contextlib.suppress(ConnectionResetError):  # stop() aborts: a reset is as good as an end of stream
        assert await asyncio.wait_for(reader.read(), 5) == b""
    await close(writer)
    with pytest.raises(OSError):
        await asyncio.open_connection("127.0.0.1", port)


async def test_producer_through_proxy_and_broker_gets_every_record_acked():
    proxy = LatencyProxy("127.0.0.1", 0, one_way_delay_ms=10)
    await proxy.start()
    broker = await asyncio.to_thread(start_broker, extra_args=("--advertised-listeners", proxy.address))
    try:
        proxy.target = ("127.0.0.1", broker.port)
        topic = unique_topic("proxied")
        with WireClient(broker.host, broker.port) as wire:
            create_topic(wire, topic, configs={"producer.state.batches.to.retain": "20"})
        async with Producer(proxy.address, max_in_flight_requests_per_connection=10, batch_size=2000,
                            linger_ms=0) as producer:
            futures = [await producer.send(topic, b"%04d" % i, partition=0, headers=stamp("proxied", i))
                       for i in range(300)]
            offsets = [(await future).offset for future in futures]
            assert offsets == list(range(300))
            assert producer.partition_limit(topic, 0) == 20
            assert 1 <= producer.max_in_flight_seen(topic, 0) <= 10
        assert proxy.connections_accepted >= 1  # the advertised listener sent the producer through the proxy
        with WireClient(broker.host, broker.port) as wire:
            data = fetch_all(wire, topic)
        stored = [r for start, end in records.split_batches(data) for r in records.iter_records(data[start:end])]
        assert [read_stamp(r.headers) for r in stored] == [("proxied", i) for i in range(300)]
    finally:
        await proxy.stop()
        broker.stop()
