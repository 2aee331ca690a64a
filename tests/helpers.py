"""Small helpers shared by the tests."""

from __future__ import annotations

import asyncio
import json
import random
import socket
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def unique_topic(prefix: str = "t") -> str:
    """A topic name no other test uses."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def pinned_bytes(size: int, seed: int) -> bytes:
    """`size` bytes that look random but are the same on every run (random.Random(seed)): a failure replays."""
    return random.Random(seed).randbytes(size)


def free_port() -> int:
    """A port nothing listens on right now (bound, then released: another process may still take it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _raise_when_expired(timeout: float, what: str | Callable[[], str]) -> Callable[[], None]:
    """A check that fails the test once `timeout` seconds have passed since it was made."""
    deadline = time.monotonic() + timeout

    def check() -> None:
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what if isinstance(what, str) else what()}: not within {timeout}s")
    return check


def wait_until(condition: Callable[[], T], timeout: float = 10.0, what: str | Callable[[], str] = "the condition",
               interval: float = 0.02) -> T:
    """Poll `condition` until it returns a true value, and return that value; fail the test after `timeout` s.

    `what` names the condition in the failure, or is called then to describe what was seen instead. For what a
    broker or client does on its own time: the test waits for the observable outcome, never for a fixed time, so
    a loaded machine only makes it slower.
    """
    expired = _raise_when_expired(timeout, what)
    while not (value := condition()):
        expired()
        time.sleep(interval)
    return value


async def wait_until_async(condition: Callable[[], Any], timeout: float = 10.0, what: str = "the condition",
                           interval: float = 0.01) -> Any:
    """`wait_until` inside an event loop: polls between awaits so the loop's own tasks keep running."""
    expired = _raise_when_expired(timeout, what)
    while not (value := condition()):
        expired()
        await asyncio.sleep(interval)
    return value


def read_ready_file(popen: subprocess.Popen[Any], ready_file: Path, timeout: float = 20.0) -> dict[str, Any]:
    """The JSON `minibroker serve --ready-file` writes once it listens; fails if the process exits first."""
    wait_until(lambda: ready_file.exists() or popen.poll() is not None, timeout, f"{ready_file} written")
    assert ready_file.exists(), f"minibroker exited with {popen.poll()} before it was ready"
    ready: dict[str, Any] = json.loads(ready_file.read_text())
    return ready
