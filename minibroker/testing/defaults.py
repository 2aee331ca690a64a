"""Broker configs every test broker starts with unless the caller sets them."""

from __future__ import annotations

#: As Kafka's own integration-test harness sets it (KafkaServerTestHarness): the first JoinGroup of a group
#: completes at once instead of waiting Kafka's group.initial.rebalance.delay.ms of 3 s for more members.
#: `minibroker serve` keeps Kafka's default. Used by BrokerThread, start_broker and the pytest plugin's brokers.
TEST_BROKER_CONFIG: dict[str, str] = {"group.initial.rebalance.delay.ms": "0"}
