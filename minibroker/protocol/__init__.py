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


def _package_without_running_its_init(name: str) -> None:
    """Make the package `name` a module whose `__init__` runs only when one of its own names is first used.

    Submodules import as usual through the package path; the first use of a name of the package itself (`from
    kafka import KafkaConsumer`, `kafka.__version__`) runs the real `__init__` in place, quietly (see
    quiet_schema_loading), so code sharing the process with the broker sees the usual package.
    """
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not a regular package: leave the import to Python
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def load_the_package_on_first_use(attribute: str) -> Any:
        del package.__dict__["__getattr__"]
        with quiet_schema_loading():
            loader.exec_module(package)
        return getattr(package, attribute)

    package.__dict__["__getattr__"] = load_the_package_on_first_use
    sys.modules[name] = package
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, package)  # as the import system binds a submodule to its parent


# minibroker needs kafka-python's protocol classes (`kafka.protocol.*`), not its client: the package `kafka`'s
# `__init__` imports the whole client (producer, consumer, admin: about 150 modules, half a second of CPU and 15 MB)
# before `kafka.protocol` can load. The protocol packages' own `__init__`s import every message class of their
# group (`kafka.protocol.admin`: 80 classes, each compiled from its JSON definition when its module runs), where a
# broker needs only those of the APIs its clients call: messages.py imports each class from its own module, on
# first use.
_package_without_running_its_init("kafka")
for _group in ("admin", "consumer", "metadata", "producer"):
    _package_without_running_its_init(f"kafka.protocol.{_group}")

# A module of minibroker that imports kafka must import this package first, and kafka's modules that create
# classes when imported must load quietly: these here, which minibroker's modules import at their top (the engine
# with its request and response headers; consumer_protocol.py's), the message classes inside messages.py
# (testing/control.py imports kafka.errors inside a function; tests/integration/test_packaging.py checks them).
with quiet_schema_loading():
    import kafka.protocol.api_message
    import kafka.protocol.consumer.metadata  # noqa: F401
