"""Test support: the pytest plugin, thread-backed brokers, broker processes, test control and a wire client."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .admin import TopicError
    from .defaults import TEST_BROKER_CONFIG
    from .embedded import BrokerThread, ClusterThread
    from .process import BrokerProcess, start_broker

__all__ = ["TEST_BROKER_CONFIG", "BrokerProcess", "BrokerThread", "ClusterThread", "TopicError", "start_broker"]

# Imported on first use: the pytest plugin lives in this package and loads with every pytest run.
_LAZY = {"BrokerThread": ".embedded", "ClusterThread": ".embedded", "BrokerProcess": ".process",
         "start_broker": ".process", "TopicError": ".admin", "TEST_BROKER_CONFIG": ".defaults"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
