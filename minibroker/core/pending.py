"""An answer that is not ready yet, completed by the core without asyncio."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_UNSET: Any = object()


class Pending:
    """A response still being waited for: completed on an event or at its deadline.

    Completing only marks the wait as over. Unless the completion carries its
    answer (a result decided at that moment, such as a JoinGroup outcome),
    `build` makes the answer when it is first read, which the server does when it
    is about to send it: a woken Fetch then reads the log after the append that
    woke it has finished, producer state and transaction bookkeeping included.
    """

    __slots__ = ("deadline_ms", "_build", "_done", "_result", "_callbacks", "_on_finish", "_source")

    def __init__(self, build: Callable[[], Any], deadline_ms: int) -> None:
        self.deadline_ms = deadline_ms
        self._build = build
        self._done = False
        self._result: Any = _UNSET
        self._callbacks: list[Callable[[Pending], None]] = []
        self._on_finish: list[Callable[[], None]] = []
        self._source: Pending | None = None

    @property
    def done(self) -> bool:
        return self._done

    def result(self) -> Any:
        """The answer, built now if the completion did not carry one (only after the wait is over)."""
        if not self._done:
            raise RuntimeError("the answer is not ready")
        if self._result is _UNSET:
            self._result = self._build()
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
        """A Pending whose answer is `transform` of this one's, completed when this one completes."""
        follower = Pending(lambda: transform(self.result()), self.deadline_ms)
        follower._source = self
        self.add_done_callback(lambda _source: follower.complete())
        return follower

    def complete(self, result: Any = _UNSET) -> None:
        """End the wait now, with `result` as the answer, or to build it when it is read."""
        if self._done:
            return
        if self._source is not None and not self._source.done:
            self._source.complete()  # its callback completes this one, built from its answer
            return
        self._done = True
        self._result = result
        for finish in self._on_finish:
            finish()
        for callback in self._callbacks:
            callback(self)
        self._callbacks.clear()
