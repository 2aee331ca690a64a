"""An answer that is not ready yet, completed by the core without asyncio."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Pending:
    """A response still being waited for: completed on an event or at its deadline.

    `build` computes the response when the wait ends (it is called exactly
    once); the server awaits completion and arms a timer for `deadline_ms`.
    """

    __slots__ = ("deadline_ms", "_build", "_done", "_result", "_callbacks", "_on_finish", "_source")

    def __init__(self, build: Callable[[], Any], deadline_ms: int) -> None:
        self.deadline_ms = deadline_ms
        self._build = build
        self._done = False
        self._result: Any = None
        self._callbacks: list[Callable[[Pending], None]] = []
        self._on_finish: list[Callable[[], None]] = []
        self._source: Pending | None = None

    @property
    def done(self) -> bool:
        return self._done

    def result(self) -> Any:
        return self._result

    def on_finish(self, callback: Callable[[], None]) -> None:
        """Run `callback` when the wait ends (used to unregister watchers)."""
        self._on_finish.append(callback)

    def add_done_callback(self, callback: Callable[[Pending], None]) -> None:
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def then(self, transform: Callable[[Any], Any]) -> Pending:
        """A Pending that completes with `transform(result)` when this one completes."""
        follower = Pending(lambda: transform(self.result()), self.deadline_ms)
        follower._source = self
        self.add_done_callback(lambda _source: follower.complete())
        return follower

    def complete(self) -> None:
        """End the wait now and build the response."""
        if self._done:
            return
        if self._source is not None and not self._source.done:
            self._source.complete()  # its callback completes this one
            return
        self._done = True
        for finish in self._on_finish:
            finish()
        self._result = self._build()
        for callback in self._callbacks:
            callback(self)
        self._callbacks.clear()
