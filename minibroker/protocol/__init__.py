"""Wire protocol: message classes, headers, error codes and RecordBatch v2 views."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager


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


# kafka's __init__ creates every protocol class minibroker uses, so once it is imported here later imports do
# not warn. A module of minibroker that imports kafka must import this package first (testing/control.py
# imports kafka.errors inside a function for that reason; tests/integration/test_packaging.py checks them).
with quiet_schema_loading():
    import kafka  # noqa: F401
