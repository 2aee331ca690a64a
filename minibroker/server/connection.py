"""One client connection as a sans-IO state machine (h11's model): bytes in, requests out; answers in, bytes out.

No sockets, no event loop, no clock of its own. The asyncio adapter (`server/adapter.py`) feeds it
what the socket read, asks it for the next request, hands it each answer and writes what it
returns; everything that decides anything lives here, so it is tested with plain bytes
(tests/unit/test_connection.py):

- framing (`FrameReader`): a frame's memory grows as its bytes arrive, sizes outside
  1..`socket.request.max.bytes` close the connection;
- order: requests are handed out one at a time, in arrival order, and the next only after the
  previous one was answered, so answers leave in arrival order even when one of them waits
  (a Fetch long poll, a JoinGroup, an answer held by test control);
- backpressure: Kafka mutes a channel from a complete request until its answer is sent, so the
  requests behind it wait in the socket. Here the connection takes at most `max_queued_bytes` of
  request bytes behind the one being answered (`read_room` tells the adapter how much the next read
  may bring), as frames queued up to `max_queued_requests` or bytes not yet framed; it is read
  again once the answer is given. Pipelined requests behind a waiting one are seen (test control
  counts them), and a client streaming large frames behind a long poll makes the broker hold one
  read's worth, not its frames. With `max_unsent_bytes` of answers the client has not read, no more
  frames are taken either, and `reading_wanted` turns False;
- `queued.max.request.bytes`: every request byte the connection holds across reads counts in the
  node's `RequestMemory` (a frame being received with its whole declared size, as Kafka's
  NetworkReceive allocates it), and reading stops while the pool has no room; `connections.max.idle.ms`
  (`idle_expired`).

Its state changes only through `TRANSITIONS` (READING -> ANSWERING -> READING ..., CLOSED from either), as h11's
connection does; `send_answer` with no request handed out is an `IllegalTransition`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, Literal, Protocol

from ..apis.dispatch import Adjust
from ..core.transitions import EventTable, IllegalTransition
from .framing import FrameError, FrameReader
from .quotas import RequestMemory

# Producers pipeline 5-20 requests; Kafka handles one at a time per connection and reads no more
# meanwhile. Answers that are ready at once (Produce, Metadata) never make a request wait, so this
# only bounds what is read behind a waiting one (a long poll, a held answer): one read's worth.
MAX_QUEUED_REQUESTS = 64  # requests received while an earlier one waits for its answer
MAX_QUEUED_BYTES = 256 * 1024  # request bytes received while an earlier one waits (the adapter's read size)
MAX_UNSENT_BYTES = 4 * 1024 * 1024  # answers handed to the connection that the client has not taken

Buffers = Sequence[bytes | bytearray | memoryview]  # one answer as buffers written back to back


@dataclass(frozen=True, slots=True)
class DropConnection:
    """A hook's verdict on an answer: close the connection instead of sending it."""

    reason: str


SEND: Final = "send"  # a hook's verdict on an answer: send it now
LATER: Final = "later"  # the hook keeps the answer and calls `send` when it should go (later ones wait behind it)
AnswerVerdict = Literal["send", "later"] | DropConnection


class RequestHook(Protocol):
    """What the server tells an observer about each request, in order; test control registers one (testing/).

    `request_seen`: a request's bytes have all arrived (it may wait behind others before it is
    handled); the token it returns comes back in every later call about that request.
    `decoded`: the request's body, when the hook decoded it on arrival (`apis.dispatch.decode_frame`), for the
    dispatcher to handle as it is: no request is decoded twice. None: the dispatcher decodes it.
    `before_handling`: an `Adjust` that answers instead of the API or changes its answer, or None.
    `answer_ready`: the answer is about to be sent: SEND, LATER (the hook calls `send` itself), or
    DropConnection. `answer_sent`: the answer was handed to the socket, or the connection closed first.
    """

    def request_seen(self, frame: memoryview | bytes | bytearray, node_id: int) -> Any: ...

    def decoded(self, token: Any) -> Any: ...

    def before_handling(self, token: Any) -> Adjust | None: ...

    def answer_ready(self, token: Any, send: Callable[[], None]) -> AnswerVerdict: ...

    def answer_sent(self, token: Any) -> None: ...


@dataclass(slots=True)
class Request:
    """A complete request frame (without its size) and its hook token.

    `frame` may point into the buffer last given to `receive_data`: handle it before the next one.
    `owned`: the frame's memory is this request's alone (assembled over several reads, or copied
    while it waited), so the log may keep a batch of it as it is instead of copying it.
    """

    frame: memoryview | bytes | bytearray
    token: Any = None
    owned: bool = False


@dataclass(slots=True)
class Closed:
    """The connection must close; `reason` goes into the log line."""

    reason: str


class _Sentinel:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


NEED_DATA = _Sentinel("NEED_DATA")  # no complete request: read more
PAUSED = _Sentinel("PAUSED")  # a request is being answered, or the client is not reading its answers

Event = Request | Closed | _Sentinel


class ConnectionState(Enum):
    READING = "READING"  # no request handed out: frames are taken as they come
    ANSWERING = "ANSWERING"  # a request was handed out; the ones behind it wait for its answer
    CLOSED = "CLOSED"


class ConnectionEvent(Enum):
    REQUEST = "REQUEST"  # a request is handed out (`next_event`)
    ANSWER = "ANSWER"  # its answer is given (`send_answer`)
    CLOSE = "CLOSE"  # `close`, or a frame Kafka refuses


TRANSITIONS: EventTable[ConnectionState, ConnectionEvent] = EventTable("connection", {
    ConnectionState.READING: {ConnectionEvent.REQUEST: ConnectionState.ANSWERING,
                              ConnectionEvent.CLOSE: ConnectionState.CLOSED},
    ConnectionState.ANSWERING: {ConnectionEvent.ANSWER: ConnectionState.READING,
                                ConnectionEvent.CLOSE: ConnectionState.CLOSED},
    # a request handed out before the close may still be answered: nothing is sent
    ConnectionState.CLOSED: {ConnectionEvent.ANSWER: ConnectionState.CLOSED},
})


class Connection:
    """The state of one client connection; see the module docstring."""

    def __init__(
        self,
        max_frame_bytes: int,
        now_ms: Callable[[], int],
        node_id: int = 0,
        hook: RequestHook | None = None,
        request_memory: RequestMemory | None = None,
        on_memory_freed: Callable[[], None] | None = None,
        max_queued_requests: int = MAX_QUEUED_REQUESTS,
        max_unsent_bytes: int = MAX_UNSENT_BYTES,
        max_queued_bytes: int = MAX_QUEUED_BYTES,
    ) -> None:
        self._reader = FrameReader(max_frame_bytes)
        self._now_ms = now_ms
        self.node_id = node_id
        self.hook = hook
        self.max_queued_requests = max_queued_requests
        self.max_unsent_bytes = max_unsent_bytes
        self.max_queued_bytes = max_queued_bytes
        self._queued: deque[Request] = deque()  # arrived while an earlier request was being answered
        self._queued_bytes = 0  # their bytes as received, size prefixes included
        self.state = ConnectionState.READING  # changed by `_step` only
        self._answering: Request | None = None  # handed out, not answered yet
        self._out: list[bytes | bytearray | memoryview] = []  # answers not yet taken by data_to_send
        self._out_bytes = 0
        self._sent_tokens: list[Any] = []  # hook tokens whose answers are in _out
        self.socket_buffered = 0  # answer bytes the socket still holds (told by the adapter)
        self.socket_paused = False  # the socket's write buffer is above its high-water mark
        self._request_memory = request_memory
        self._on_memory_freed = on_memory_freed
        self._reserved = 0  # of request_memory, for the request bytes held (see _held_request_bytes)
        self._memory_blocked = False
        self.closed_reason: str | None = None
        self.last_active_ms = now_ms()
        self.requests_answered = 0

    # -- state -------------------------------------------------------------------------------

    def _step(self, event: ConnectionEvent) -> None:
        self.state = TRANSITIONS.next(self.state, event)

    @property
    def max_frame_bytes(self) -> int:
        """The largest frame taken: `socket.request.max.bytes`, or `sasl.server.max.receive.size` until a
        SASL client has authenticated (Kafka's SaslServerAuthenticator reads with that bound)."""
        return self._reader.max_frame_bytes

    @max_frame_bytes.setter
    def max_frame_bytes(self, value: int) -> None:
        self._reader.max_frame_bytes = value

    def limit_frames(self, max_frame_bytes: int, config: str) -> None:
        """Take frames of up to `max_frame_bytes`; a larger one is refused naming `config`, the bound's setting."""
        self._reader.max_frame_bytes = max_frame_bytes
        self._reader.max_frame_config = config

    @property
    def closed(self) -> bool:
        return self.closed_reason is not None

    @property
    def answering(self) -> bool:
        """A request was handed out and its answer has not been given yet."""
        return self._answering is not None

    @property
    def queued_requests(self) -> int:
        return len(self._queued)

    @property
    def unsent_bytes(self) -> int:
        """Answer bytes the client has not taken: given here and not yet written, or still in the socket."""
        return self._out_bytes + self.socket_buffered

    @property
    def buffered_bytes(self) -> int:
        """Request bytes held: frames queued, and bytes of frames not yet split or complete."""
        return self._queued_bytes + self._reader.buffered

    @property
    def reserved_request_bytes(self) -> int:
        """What the request bytes held hold of the node's `queued.max.request.bytes`."""
        return self._reserved

    @property
    def read_room(self) -> int | None:
        """How many bytes the next read may bring: None for any; while a request is being answered, what is
        left of `max_queued_bytes` (Kafka reads nothing more from a muted channel)."""
        if self._answering is None:
            return None
        return max(self.max_queued_bytes - self.buffered_bytes, 0)

    @property
    def may_take_frames(self) -> bool:
        """Whether the client may have another request decoded: it is reading what it was sent."""
        return (not self.closed and not self.socket_paused and len(self._queued) < self.max_queued_requests
                and self.unsent_bytes < self.max_unsent_bytes)

    @property
    def reading_wanted(self) -> bool:
        """Whether the adapter should read the socket now."""
        return self.may_take_frames and not self._memory_blocked and self.read_room != 0

    def idle_expired(self, now_ms: int, max_idle_ms: int) -> bool:
        """`connections.max.idle.ms`: nothing moved for longer and no request waits for an answer."""
        return (not self.closed and self._answering is None and not self._queued
                and now_ms - self.last_active_ms > max_idle_ms)

    # -- bytes in, requests out --------------------------------------------------------------------

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Bytes read from the socket. They are borrowed until `keep_unread()`; call it before reusing them."""
        if self.closed:
            return
        self.last_active_ms = self._now_ms()
        self._reader.feed(data)

    def keep_unread(self) -> None:
        """Copy what was received and not taken yet, so the adapter may reuse its read buffer."""
        self._reader.keep_unread()

    def next_event(self) -> Event:
        """The next request to handle, NEED_DATA, PAUSED, or Closed for a frame Kafka would refuse."""
        if self.closed:
            return Closed(self.closed_reason or "closed")
        if self._answering is not None:
            self._queue_arrived()
            if self.closed_reason is not None:
                return Closed(self.closed_reason)
            self._reserve_request_memory()
            return PAUSED
        if self._queued:
            self._step(ConnectionEvent.REQUEST)
            self._answering = self._queued.popleft()
            self._queued_bytes -= len(self._answering.frame) + 4
            if self._reserved:
                self._release_request_memory(down_to=self._held_request_bytes())
            return self._answering
        if not self.may_take_frames:
            self._reserve_request_memory()
            return PAUSED
        frame = self._take_frame()
        if frame is None:
            return Closed(self.closed_reason) if self.closed_reason is not None else NEED_DATA
        self._step(ConnectionEvent.REQUEST)
        self._answering = Request(frame, self._seen(frame), self._reader.last_frame_owned)
        return self._answering

    def _take_frame(self) -> memoryview | None:
        try:
            frame = self._reader.next_frame()
        except FrameError as exc:
            self.close(str(exc))
            return None
        if frame is None:
            self._reserve_request_memory()
        elif self._reserved:
            self._release_request_memory(down_to=self._held_request_bytes())
        return frame

    def _queue_arrived(self) -> None:
        """Take the frames that arrived behind the one being answered (copied: the read buffer is reused)."""
        while self.may_take_frames and self._queued_bytes < self.max_queued_bytes:
            frame = self._take_frame()
            if frame is None:
                return
            kept = bytearray(frame)  # what the hook decodes stays valid while the request waits
            self._queued.append(Request(kept, self._seen(kept), owned=True))
            self._queued_bytes += len(frame) + 4

    def _seen(self, frame: memoryview | bytearray) -> Any:
        return self.hook.request_seen(frame, self.node_id) if self.hook is not None else None

    # -- answers in, bytes out -------------------------------------------------------------------

    def send_answer(self, answer: bytes | Buffers | None) -> None:
        """The answer to the request handed out last: bytes, buffers written back to back, or None (acks=0)."""
        if self._answering is None:  # READING, or CLOSED with nothing handed out
            raise IllegalTransition("connection: send_answer without a request being answered")
        self._step(ConnectionEvent.ANSWER)
        request, self._answering = self._answering, None
        self.requests_answered += 1
        if self.closed:
            return
        if answer is None:
            self._answer_sent(request.token)
            return
        if isinstance(answer, bytes | bytearray | memoryview):
            self._out.append(answer)
            self._out_bytes += len(answer)
        else:
            self._out.extend(answer)
            self._out_bytes += sum(len(part) for part in answer)
        if self.hook is not None:
            self._sent_tokens.append(request.token)

    def data_to_send(self) -> list[bytes | bytearray | memoryview]:
        """The answer bytes given since the last call, as buffers to write in order (empty: nothing)."""
        if not self._out:
            return []
        out, self._out, self._out_bytes = self._out, [], 0
        self.last_active_ms = self._now_ms()
        tokens, self._sent_tokens = self._sent_tokens, []
        for token in tokens:
            self._answer_sent(token)
        return out

    def _answer_sent(self, token: Any) -> None:
        if self.hook is not None:
            self.hook.answer_sent(token)

    # -- closing -------------------------------------------------------------------------------

    def close(self, reason: str) -> None:
        """No more requests are taken; those not answered never will be (their tokens are given back)."""
        if self.closed:
            return
        self._step(ConnectionEvent.CLOSE)
        self.closed_reason = reason
        self._release_request_memory()
        pending = [request.token for request in self._queued]
        if self._answering is not None:
            pending.insert(0, self._answering.token)
        self._queued.clear()
        self._queued_bytes = 0
        # what arrived and was not taken is nobody's now (a long poll may keep this object until its deadline)
        self._reader = FrameReader(self._reader.max_frame_bytes)
        if self.hook is not None:
            for token in [*self._sent_tokens, *pending]:
                self.hook.answer_sent(token)
        self._sent_tokens = []

    # -- queued.max.request.bytes ----------------------------------------------------------------

    def _held_request_bytes(self) -> int:
        """What the connection holds of requests across reads: queued frames, bytes not yet framed, and a
        frame being received at its declared size (Kafka's NetworkReceive allocates it whole from the pool)."""
        reader = self._reader
        size = reader.pending_frame_size if reader.receiving else None
        return self._queued_bytes + (reader.buffered if size is None else max(size, reader.buffered))

    def _reserve_request_memory(self) -> None:
        """Hold what the connection holds in the pool, or stop reading until there is room."""
        if self._request_memory is None:
            return
        held = self._held_request_bytes()
        if held <= self._reserved:
            self._memory_blocked = False
            return
        if self._request_memory.try_reserve(held - self._reserved, self._memory_freed):
            self._reserved = held
            self._memory_blocked = False
        else:
            self._memory_blocked = True

    def _release_request_memory(self, down_to: int = 0) -> None:
        if self._reserved > down_to and self._request_memory is not None:
            freed, self._reserved = self._reserved - down_to, down_to
            self._request_memory.release(freed)

    def _memory_freed(self) -> None:
        if self.closed:
            return
        self._reserve_request_memory()
        if self._on_memory_freed is not None:
            self._on_memory_freed()
