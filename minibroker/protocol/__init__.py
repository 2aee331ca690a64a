"""Wire protocol: message classes, headers, error codes and RecordBatch v2 views."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def quiet_schema_loading() -> Iterator[None]:
    """Ignore the DeprecationWarnings kafka-python raises while it loads JSON message definitions, only those.

    kafka-python 3.0.12 reads each definition with importlib.resources.read_text, which calls open_text; both
    are deprecated, so creating its message classes warns 218 times, and ours (messages.py) 8 more. They are
    not the user's to fix and would fill the warnings summary of every pytest run that imports minibroker.
    """
    with warnings.catch_warnings():
        for function in ("read_text", "open_text"):
            warnings.filterwarnings("ignore", message=f"{function} is deprecated", category=DeprecationWarning)
        yield


def _kafka_protocol_without_its_client() -> None:
    """Make `kafka` a package whose `__init__` runs only when one of its own names is first used.

    minibroker needs kafka-python's protocol classes (`kafka.protocol.*`), not its client; the package's
    `__init__` imports the whole client (producer, consumer, admin: about 150 modules, half a second of CPU and
    15 MB) before `kafka.protocol` can load. Submodules import as usual through the package path; the first use
    of a name of the package itself (`from kafka import KafkaConsumer`, `kafka.__version__`) runs the real
    `__init__` in place, so code sharing the process with the broker sees the usual package.
    """
    if "kafka" in sys.modules:
        return
    spec = importlib.util.find_spec("kafka")
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not a regular package: leave the import to Python
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def load_the_package_on_first_use(name: str) -> Any:
        del package.__dict__["__getattr__"]
        with quiet_schema_loading():
            loader.exec_module(package)
        return getattr(package, name)

    package.__dict__["__getattr__"] = load_the_package_on_first_use
    sys.modules["kafka"] = package


# The protocol modules minibroker uses create their message classes when imported: import them here, quietly, so
# later imports do not warn. A module of minibroker that imports kafka must import this package first
# (testing/control.py imports kafka.errors inside a function for that reason; tests/integration/test_packaging.py
# checks them).
_kafka_protocol_without_its_client()
with quiet_schema_loading():
    import kafka.protocol.admin
    import kafka.protocol.admin.groups
    import kafka.protocol.admin.transactions
    import kafka.protocol.admin.users
    import kafka.protocol.consumer
    import kafka.protocol.consumer.group
    import kafka.protocol.consumer.metadata
    import kafka.protocol.metadata
    import kafka.protocol.producer
    import kafka.protocol.sasl  # noqa: F401
