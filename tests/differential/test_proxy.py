"""The differential suite's logging proxy (proxy.py), in front of an in-process minibroker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from minibroker.protocol.messages import (
    ApiVersionsRequest,
    FindCoordinatorRequest,
    MetadataRequest,
    ProduceRequest,
)
from minibroker.testing.embedded import BrokerThread
from minibroker.testing.wire import WireClient

from .proxy import LoggingProxy

API_VERSIONS, METADATA, FIND_COORDINATOR, PRODUCE = 18, 3, 10, 0
UNKNOWN_TOPIC_OR_PARTITION = 3
HELLO = ApiVersionsRequest(client_software_name="proxy-test", client_software_version="1")


@pytest.fixture
def proxied() -> Iterator[tuple[BrokerThread, LoggingProxy]]:
    broker = BrokerThread().start()
    proxy = LoggingProxy(broker.host, broker.port).start()
    try:
        yield broker, proxy
    finally:
        proxy.stop()
        broker.stop()


def test_each_connection_logs_api_version_and_error_in_request_order(
        proxied: tuple[BrokerThread, LoggingProxy]) -> None:
    broker, proxy = proxied
    with WireClient(proxy.host, proxy.port) as wire:
        assert wire.request(HELLO, 3).error_code == 0
        unknown = wire.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="absent")],
                                               allow_auto_topic_creation=False), 12)
        assert unknown.topics[0].error_code == UNKNOWN_TOPIC_OR_PARTITION
    with WireClient(proxy.host, proxy.port) as wire:
        wire.request(HELLO, 0)
    assert proxy.transcripts() == [[(API_VERSIONS, 3, 0), (METADATA, 12, UNKNOWN_TOPIC_OR_PARTITION)],
                                   [(API_VERSIONS, 0, 0)]]


def test_answers_with_addresses_name_the_proxy(proxied: tuple[BrokerThread, LoggingProxy]) -> None:
    broker, proxy = proxied
    assert broker.port != proxy.port
    with WireClient(proxy.host, proxy.port) as wire:
        metadata = wire.request(MetadataRequest(topics=[]), 12)
        coordinator = wire.request(FindCoordinatorRequest(key_type=0, coordinator_keys=["g"]), 4)
        old_coordinator = wire.request(FindCoordinatorRequest(key="g", key_type=0), 3)
    assert [(b.host, b.port) for b in metadata.brokers] == [(proxy.host, proxy.port)]
    assert [(c.host, c.port, c.error_code) for c in coordinator.coordinators] == [(proxy.host, proxy.port, 0)]
    assert (old_coordinator.host, old_coordinator.port) == (proxy.host, proxy.port)
    assert metadata.cluster_id == broker.cluster.cluster_id  # the rest of the answer is the broker's


def test_a_request_without_answer_is_logged_as_none(proxied: tuple[BrokerThread, LoggingProxy]) -> None:
    broker, proxy = proxied
    with WireClient(proxy.host, proxy.port) as wire:
        wire.send_raw(wire.encode_request(ProduceRequest(acks=0, timeout_ms=1000, topic_data=[]), 9))
        assert wire.request(HELLO, 3).error_code == 0  # answered after the acks=0 request
    assert proxy.transcripts() == [[(PRODUCE, 9, "none"), (API_VERSIONS, 3, 0)]]
