"""minibroker: a Kafka wire-protocol broker in Python, reference implementation of KIP-1269."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .core.clock import ManualClock, SystemClock
    from .server.broker import Broker

__all__ = ["Broker", "ManualClock", "SystemClock"]
__version__ = "0.1.0"

# Imported on first use: the pytest plugin loads with every pytest run and must not pay for the broker.
_LAZY = {"Broker": ".server.broker", "ManualClock": ".core.clock", "SystemClock": ".core.clock"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
