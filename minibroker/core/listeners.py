"""`listeners`, `advertised.listeners` and `listener.security.protocol.map` as Kafka reads them.

Mirrors Kafka's SocketServerConfigs.listenerListToEndPoints / Endpoint parsing and KafkaConfig's
listener requirements: names are upper-cased (ListenerName.normalised), every name needs a
security protocol in the map, names and non-zero ports are unique, advertised names are a subset
of the listeners' and never advertise the wildcard 0.0.0.0. Errors carry Kafka's messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..protocol.security_protocol import SECURITY_PROTOCOLS, uses_sasl, uses_tls

DEFAULT_PROTOCOL_MAP = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"

# Kafka's Endpoint URI_PARSE_REGEXP: NAME://host:port, host optional, IPv6 in brackets
_ENDPOINT = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


class ListenerConfigError(ValueError):
    """A listener config Kafka refuses at start-up (its IllegalArgumentException text)."""


@dataclass(frozen=True, slots=True)
class ListenerSpec:
    """One `NAME://host:port` entry: an empty host means every interface."""

    name: str
    security_protocol: str
    host: str
    port: int

    @property
    def uses_tls(self) -> bool:
        return uses_tls(self.security_protocol)

    @property
    def uses_sasl(self) -> bool:
        return uses_sasl(self.security_protocol)


def _csv(value: str | list[str]) -> list[str]:
    items = value if isinstance(value, list) else value.split(",")
    return [item.strip() for item in items if item.strip()]


def _text(value: str | list[str]) -> str:
    """The listeners as Kafka 4's messages show them: a Java list, `[PLAINTEXT://:9092, SSL://:9093]`."""
    return "[" + ", ".join(_csv(value)) + "]"


def parse_protocol_map(value: str | list[str]) -> dict[str, str]:
    """`listener.security.protocol.map`: listener name -> security protocol."""
    protocols: dict[str, str] = {}
    for item in _csv(value):
        name, sep, protocol = item.rpartition(":")
        if not sep or not name:
            raise ListenerConfigError(f"Invalid value {value} for configuration listener.security.protocol.map: "
                                      f"Map entry '{item}' is improperly formatted")
        protocol = protocol.strip().upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise ListenerConfigError(f"No enum constant org.apache.kafka.common.security.auth.SecurityProtocol."
                                      f"{protocol}")
        protocols[name.strip().upper()] = protocol
    return protocols


def parse_listeners(value: str | list[str], protocols: dict[str, str], config_name: str = "listeners",
                    distinct_ports: bool = True) -> list[ListenerSpec]:
    """The listeners of a `listeners`-style value, validated as KafkaConfig validates them."""
    specs = []
    text = _text(value)
    try:
        for entry in _csv(value):
            match = _ENDPOINT.match(entry)
            if match is None:
                raise ListenerConfigError(f"Unable to parse {entry} to a broker endpoint")
            name = match.group(1).upper()
            if name not in protocols:
                raise ListenerConfigError(f"No security protocol defined for listener {name}")
            specs.append(ListenerSpec(name, protocols[name], match.group(2), int(match.group(3))))
    except ListenerConfigError as exc:
        raise ListenerConfigError(f"Error creating broker listeners from '{text}': {exc}") from exc
    if len({spec.name for spec in specs}) != len(specs):
        raise ListenerConfigError(f"Each listener must have a different name, {config_name}: {text}")
    ports = [spec.port for spec in specs if spec.port != 0]
    if distinct_ports and len(set(ports)) != len(ports):
        raise ListenerConfigError(f"Each listener must have a different port, {config_name}: {text}")
    return specs


def advertised_listeners(value: str | list[str] | None, listeners: list[ListenerSpec],
                         protocols: dict[str, str]) -> list[ListenerSpec]:
    """`advertised.listeners` (default: the listeners themselves), checked against the listeners."""
    if not value:
        return list(listeners)
    advertised = parse_listeners(value, protocols, "advertised.listeners", distinct_ports=False)
    if not {spec.name for spec in advertised} <= {spec.name for spec in listeners}:
        raise ListenerConfigError("requirement failed: advertised.listeners listener names must be equal to or a "
                                  "subset of the ones defined in listeners")
    if any(spec.host == "0.0.0.0" for spec in advertised):
        raise ListenerConfigError("requirement failed: advertised.listeners cannot use the nonroutable "
                                  "meta-address 0.0.0.0. Use a routable IP address.")
    return advertised
