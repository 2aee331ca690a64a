"""Connection limits and the request memory pool (server/quotas.py) without sockets."""

from __future__ import annotations

from minibroker.core.config import BrokerConfig
from minibroker.server.quotas import ConnectionQuotas, RequestMemory


def test_max_connections_per_ip_counts_each_address_and_frees_on_release() -> None:
    quotas = ConnectionQuotas(BrokerConfig({"max.connections.per.ip": "2"}))
    assert quotas.admit("10.0.0.1") is None and quotas.admit("10.0.0.1") is None
    refused = quotas.admit("10.0.0.1")
    assert refused is not None and "max.connections.per.ip" in refused and "maximum of 2" in refused
    assert quotas.admit("10.0.0.2") is None  # another address has its own count
    quotas.release("10.0.0.1")
    assert quotas.admit("10.0.0.1") is None
    assert (quotas.total, quotas.rejected) == (3, 1)


def test_overrides_give_one_address_its_own_limit_even_zero() -> None:
    config = BrokerConfig({"max.connections.per.ip": "0", "max.connections.per.ip.overrides": "127.0.0.1:3"})
    quotas = ConnectionQuotas(config)
    assert [quotas.admit("127.0.0.1") for _ in range(4)][-1] is not None
    assert quotas.admit("10.9.9.9") is not None  # everyone else: zero
    assert quotas.total == 3


def test_max_connections_caps_the_node_whatever_the_address() -> None:
    quotas = ConnectionQuotas(BrokerConfig({"max.connections": "2"}))
    assert quotas.admit("a") is None and quotas.admit("b") is None
    refused = quotas.admit("c")
    assert refused is not None and "(max.connections)" in refused
    quotas.release("a")
    assert quotas.admit("c") is None


def test_a_dynamic_update_applies_to_the_next_connection() -> None:
    config = BrokerConfig()
    quotas = ConnectionQuotas(config)
    assert quotas.admit("x") is None
    config.replace_dynamic(None, config.validate_dynamic({"max.connections": "1"}, None))
    assert quotas.admit("y") is not None


def test_request_memory_wakes_waiters_when_a_reservation_is_given_back() -> None:
    memory = RequestMemory(100)
    woken: list[int] = []
    assert memory.try_reserve(60, lambda: woken.append(1))
    assert not memory.try_reserve(50, lambda: woken.append(2))
    memory.release(60)
    assert woken == [2] and memory.reserved == 0
    assert RequestMemory(-1).try_reserve(10**12, lambda: None)  # -1: unlimited, as Kafka's default
