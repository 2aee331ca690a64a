"""Kafka's SecurityProtocol (org.apache.kafka.common.security.auth): how a listener or a client connection is secured.

The four names, in the enum's order, and which of them run over TLS and which authenticate with SASL: the one
rule the broker's listeners (core/listeners.py, server/broker.py) and minibroker's client (client/security.py)
both follow.
"""

from __future__ import annotations

from typing import Final

SECURITY_PROTOCOLS: Final = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_TLS: Final = frozenset({"SSL", "SASL_SSL"})
_SASL: Final = frozenset({"SASL_PLAINTEXT", "SASL_SSL"})


def uses_tls(security_protocol: str) -> bool:
    """Whether a connection of this security protocol runs over TLS (SSL, SASL_SSL)."""
    return security_protocol in _TLS


def uses_sasl(security_protocol: str) -> bool:
    """Whether a connection of this security protocol authenticates with SASL (SASL_PLAINTEXT, SASL_SSL)."""
    return security_protocol in _SASL
