"""group.initial.rebalance.delay.ms: Kafka's default (3000) in the registry and for `minibroker serve`; test brokers
(BrokerThread, start_broker, the pytest plugin's) start with 0 unless the caller sets it, as Kafka's own
integration-test harness does."""

from __future__ import annotations

from typing import Any

from minibroker.core.config import BrokerConfig, ConfigSource
from minibroker.protocol.messages import DescribeConfigsRequest
from minibroker.testing import TEST_BROKER_CONFIG, BrokerThread, start_broker
from minibroker.testing.wire import WireClient

DELAY = "group.initial.rebalance.delay.ms"
START_TIMEOUT_S = 60.0


def described(host: str, port: int, node_id: int = 0) -> tuple[str, int]:
    """(value, source) of the delay as DescribeConfigs gives it for BROKER "<node_id>"."""
    resource = DescribeConfigsRequest.DescribeConfigsResource(resource_type=4, resource_name=str(node_id),
                                                              configuration_keys=[DELAY])
    with WireClient(host, port) as wire:
        answer: Any = wire.request(DescribeConfigsRequest(resources=[resource], include_synonyms=False), 4)
    entry = answer.results[0].configs[0]
    return entry.value, entry.config_source


def test_the_registry_default_is_kafkas():
    entry = BrokerConfig().describe(DELAY)
    assert (entry.value, entry.source) == (3000, ConfigSource.DEFAULT_CONFIG)


def test_test_brokers_start_without_the_delay():
    assert TEST_BROKER_CONFIG == {DELAY: "0"}
    with BrokerThread() as broker:
        assert broker.broker.cluster.config[DELAY] == 0
    with BrokerThread(config={DELAY: "500"}) as broker:
        assert broker.broker.cluster.config[DELAY] == 500


def test_broker_processes_start_without_the_delay_unless_told():
    process = start_broker(timeout=START_TIMEOUT_S)
    try:
        assert described(process.host, process.port) == ("0", ConfigSource.STATIC_BROKER_CONFIG)
    finally:
        process.stop()
    process = start_broker(f"{DELAY}=3000", timeout=START_TIMEOUT_S)
    try:
        assert described(process.host, process.port) == ("3000", ConfigSource.STATIC_BROKER_CONFIG)
    finally:
        process.stop()


def test_kafka_pytest_plugin_session_broker_has_no_delay(kafka_broker):
    host, _, port = kafka_broker.bootstrap_servers.split(",")[0].rpartition(":")
    assert described(host, int(port)) == ("0", ConfigSource.STATIC_BROKER_CONFIG)
