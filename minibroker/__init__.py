"""minibroker: a Kafka wire-protocol broker in Python, reference implementation of KIP-1269."""

from .core.clock import ManualClock, SystemClock
from .server.broker import Broker

__all__ = ["Broker", "ManualClock", "SystemClock"]
__version__ = "0.1.0"
