"""The project's producer gives up on a silent broker as Kafka's clients do.

An answer that does not come within request.timeout.ms closes the connection and the batches are
retried on a new one with their sequences (Kafka's NetworkClient); a connection that is not set up
within socket.connection.setup.timeout.ms is given up. Without them one lost answer or one stuck
connect held the producer until delivery.timeout.ms (two minutes).
"""

from __future__ import annotations

import asyncio
import time

import pytest

import minibroker.client.client as client_module
from minibroker.client import Producer
from minibroker.client.client import KafkaClient
from minibroker.testing.process import start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.test_kip1269_producer import read_back
from tests.integration.test_wire_protocol import create_topic

HELD_MS = 60_000  # far beyond the request timeout and the test's own patience


def test_an_answer_held_past_the_request_timeout_is_retried_on_a_new_connection() -> None:
    broker = start_broker(extra_args=("--control-port", "0"))
    try:
        topic = unique_topic("request-timeout")
        with WireClient(broker.host, broker.port) as wire:
            create_topic(wire, topic)
        with broker.control as control:
            control.delay("produce", delay_ms=HELD_MS, count=1, topic=topic)  # the first answer never comes

        async def produce() -> list[int]:
            async with Producer(broker.bootstrap_servers, request_timeout_ms=1000, linger_ms=0) as producer:
                futures = [await producer.send(topic, b"v%d" % i, partition=0) for i in range(20)]
                done = await asyncio.wait_for(asyncio.gather(*futures), timeout=30)
                return [metadata.offset for metadata in done]

        started = time.monotonic()
        offsets = asyncio.run(produce())
        assert time.monotonic() - started < 30
        assert sorted(offsets) == list(range(20))
        values = [value for value, _stamp in read_back(broker, topic, 1, 20)[0]]
        assert values == [b"v%d" % i for i in range(20)]  # each once, in order: the retry was a duplicate
    finally:
        broker.stop()


def test_a_connection_not_set_up_in_time_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "CONNECTION_SETUP_TIMEOUT_S", 0.5, raising=False)

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # accepts, never answers ApiVersions
        writer.close()

    async def connect() -> float:
        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        kafka = KafkaClient(f"127.0.0.1:{port}")
        kafka.nodes = {0: ("127.0.0.1", port)}
        started = time.monotonic()
        try:
            with pytest.raises(TimeoutError):
                await kafka.connection(0)
            return time.monotonic() - started
        finally:
            await kafka.close()
            server.close()

    assert asyncio.run(connect()) < 5
