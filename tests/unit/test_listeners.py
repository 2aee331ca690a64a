"""`listeners`, `advertised.listeners`, `listener.security.protocol.map` and `listener.name.` configs."""

from __future__ import annotations

import pytest

from minibroker.core.config import BrokerConfig, ConfigError
from minibroker.core.listeners import ListenerSpec


def test_listeners_take_their_security_protocol_from_the_map_and_upper_case_names() -> None:
    config = BrokerConfig({"listeners": "plaintext://127.0.0.1:9092,EXTERNAL://:9094",
                           "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,EXTERNAL:SASL_SSL"})
    assert config.listeners == [ListenerSpec("PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9092),
                                ListenerSpec("EXTERNAL", "SASL_SSL", "", 9094)]
    assert config.listeners[1].uses_tls and config.listeners[1].uses_sasl


@pytest.mark.parametrize(("settings", "message"), [
    ({"listeners": "INTERNAL://:9092"},
     "Error creating broker listeners from '[INTERNAL://:9092]': No security protocol defined for listener INTERNAL"),
    ({"listeners": "PLAINTEXT://:9092,PLAINTEXT://:9093"},
     "Each listener must have a different name, listeners: [PLAINTEXT://:9092, PLAINTEXT://:9093]"),
    ({"listeners": "PLAINTEXT://:9092,SSL://:9092"},
     "Each listener must have a different port, listeners: [PLAINTEXT://:9092, SSL://:9092]"),
    ({"listeners": "PLAINTEXT//:9092"},
     "Error creating broker listeners from '[PLAINTEXT//:9092]': Unable to parse PLAINTEXT//:9092 to a broker "
     "endpoint"),
    ({"listeners": "PLAINTEXT://:9092", "advertised.listeners": "SSL://example.com:9093"},
     "requirement failed: advertised.listeners listener names must be equal to or a subset of the ones defined "
     "in listeners"),
    ({"listeners": "PLAINTEXT://:9092", "advertised.listeners": "PLAINTEXT://0.0.0.0:9092"},
     "requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP "
     "address."),
    ({"listener.name.plaintext.no.such.config": "1"}, "Unknown broker config name: listener.name.plaintext.no.such"
                                                        ".config"),
])
def test_listener_configs_kafka_refuses_are_refused_with_its_message(settings: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        BrokerConfig(settings)
    assert refused.value.message == message


def test_advertised_listeners_may_share_a_port_and_default_to_the_listeners() -> None:
    config = BrokerConfig({"listeners": "A://:9092,B://:9093", "listener.security.protocol.map": "A:PLAINTEXT,B:SSL",
                           "advertised.listeners": "A://lb:9092,B://lb:9092"})
    assert [(spec.name, spec.host, spec.port) for spec in config.advertised] == [("A", "lb", 9092), ("B", "lb", 9092)]
    assert BrokerConfig({"listeners": "PLAINTEXT://:9092"}).advertised == []


def test_a_listener_prefix_overrides_the_broker_config_for_that_listener_only() -> None:
    config = BrokerConfig({"listeners": "PLAINTEXT://:9092,SSL://:9093", "max.connections": "100",
                           "listener.name.ssl.max.connections": "7"})
    assert config.listener_value("SSL", "max.connections") == 7
    assert config.listener_value("PLAINTEXT", "max.connections") == 100
