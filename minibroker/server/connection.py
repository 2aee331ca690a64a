"""One client connection: framing, and requests answered in arrival order."""

from __future__ import annotations

import asyncio
import logging
import struct
import time
from collections import deque
from collections.abc import Callable

from ..apis.context import CloseConnection
from ..apis.dispatch import Deferred, NoReply, Reply, handle_frame
from ..core.cluster import Cluster, Node
from ..protocol.errors import KafkaError
from ..protocol.messages import RESPONSES, api_name
from ..testing.control import Control, Ticket
from .framing import FrameError, FrameReader
from .quotas import ConnectionQuotas, RequestMemory

log = logging.getLogger("minibroker.connection")

READ_BUFFER_SIZE = 256 * 1024  # one per broker, shared by its connections: reads land here
# A connection whose client does not read its answers stops being read (Kafka mutes a connection
# while one request of it is in flight; producers pipeline 5-20 requests, so more are allowed here):
MAX_QUEUED_REQUESTS = 64  # decoded requests waiting for an earlier answer
MAX_UNSENT_BYTES = 4 * 1024 * 1024  # answers not yet taken by the client's socket
_HEADER = struct.Struct(">hhih")  # api key, api version, correlation id, client id length
_API_VERSIONS = 18


def _first_error(value: object) -> int:
    """The first non-zero `error_code` in a decoded response: its own, then its fields' in order."""
    code = getattr(value, "error_code", 0)
    if code:
        return int(code)
    for name in getattr(type(value), "fields", ()):
        items = getattr(value, name)
        if isinstance(items, list):
            for item in items:
                code = _first_error(item)
                if code:
                    return code
    return 0


def _error_code(api_key: int, api_version: int, data: bytes) -> int | str:
    """The error a response frame reports (see `_first_error`), "?" if it does not decode. DEBUG logging only."""
    if api_key == _API_VERSIONS:
        # every version starts with the error code, and an unsupported version is answered at v0 (KIP-511)
        return int(struct.unpack_from(">h", data, 8)[0])
    try:
        response_class = RESPONSES[api_key]
        body = 9 if response_class.flexible_version_q(api_version) else 8  # size, correlation id, tagged fields
        return _first_error(response_class.decode(data[body:], version=api_version))
    except Exception:
        return "?"


def _call_after(seconds: float, callback: Callable[[], None]) -> None:
    """Call back no sooner than `seconds` from now (the loop's timers may fire a little early)."""
    deadline = time.monotonic() + seconds
    loop = asyncio.get_running_loop()

    def check() -> None:
        remaining = deadline - time.monotonic()
        if remaining > 0:
            loop.call_later(remaining, check)
        else:
            callback()

    loop.call_later(seconds, check)


class KafkaConnection(asyncio.BufferedProtocol):
    """Reads size-prefixed frames and answers each request, in order.

    Reads land in the broker's one shared read buffer; frames that arrive whole are handled
    straight from it and only an incomplete one is kept by the connection (`FrameReader`), so an
    idle connection holds a few hundred bytes and a frame's memory grows as its bytes arrive.
    Beyond MAX_QUEUED_REQUESTS waiting requests or MAX_UNSENT_BYTES of answers the client has
    not read, the connection takes no more frames and its socket is not read until it catches up.
    """

    def __init__(
        self,
        cluster: Cluster,
        node: Node,
        registry: set[KafkaConnection] | None = None,
        control: Control | None = None,
        read_buffer: bytearray | None = None,
        quotas: ConnectionQuotas | None = None,
        request_memory: RequestMemory | None = None,
    ) -> None:
        self.cluster = cluster
        self.control = control
        self._registry = registry if registry is not None else set()
        self.node = node
        self.transport: asyncio.Transport | None = None
        self.peer = "?"
        self.client_host = ""
        self._quotas = quotas
        self._request_memory = request_memory
        self._reserved = 0  # of request_memory, for the frame being received
        self._memory_blocked = False
        self._admitted_ip: str | None = None  # counted by the quotas until the connection closes
        self.last_active_ms = cluster.clock.now_ms()  # for connections.max.idle.ms
        self._read_buffer = memoryview(read_buffer if read_buffer is not None else bytearray(READ_BUFFER_SIZE))
        self._reader = FrameReader(cluster.config["socket.request.max.bytes"])
        self._reading = True
        self._write_paused = False
        self._out_bytes = 0
        self._backlog: deque[bytes] = deque()
        self._waiting = False  # a deferred answer is outstanding; later requests queue up
        self._closed = False
        self._timer: asyncio.TimerHandle | None = None
        self._out: list[bytes] = []  # responses gathered while one read burst is handled
        # with test control: requests not yet handled, and requests not yet answered (both in arrival order)
        self._unhandled: deque[Ticket] = deque()
        self._unanswered: deque[Ticket] = deque()
        # with DEBUG logging (decided once per connection, so it costs nothing otherwise): requests not yet
        # answered as (received at, api key, api version, correlation id, client id), and how many were
        self._log_requests = False
        self._logged: deque[tuple[float, int, int, int, str | None]] = deque()
        self._served = 0

    # -- asyncio callbacks -------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's transports are not subclasses
        self._registry.add(self)
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        self.client_host = f"/{peer[0]}" if peer else ""  # Kafka shows hosts as "/127.0.0.1"
        if self._quotas is not None and peer:
            refused = self._quotas.admit(peer[0])
            if refused is not None:
                # SocketServer's wording; the count tells how many were refused since start-up
                log.info("Rejected connection from /%s, %s; %d refused so far", peer[0], refused,
                         self._quotas.rejected)
                self._closed = True
                transport.close()
                return
            self._admitted_ip = peer[0]
        self._log_requests = log.isEnabledFor(logging.DEBUG)
        if self._log_requests:
            log.debug("connection from %s opened on node %d", self.peer, self.node.node_id)

    def connection_lost(self, exc: Exception | None) -> None:
        self._release_request_memory()
        if self._quotas is not None and self._admitted_ip is not None:
            self._quotas.release(self._admitted_ip)
            self._admitted_ip = None
        if self._log_requests:
            log.debug("connection from %s closed after %d requests", self.peer, self._served)
        self._registry.discard(self)
        self._closed = True
        self._backlog.clear()
        self._forget_tickets()
        if self._timer is not None:
            self._timer.cancel()

    def drop(self, reason: str) -> None:
        """Close the connection now; requests not yet answered never will be (test control)."""
        self._close(reason)

    def abort(self) -> None:
        """Drop the connection at once (broker shutdown)."""
        self._closed = True
        if self.transport is not None:
            self.transport.abort()

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        self._pump()

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._read_buffer

    def close_if_idle(self, now_ms: int, max_idle_ms: int) -> bool:
        """Close the connection when nothing moved on it for `max_idle_ms` and no request waits for an answer."""
        if self._closed or self._waiting or self._backlog or now_ms - self.last_active_ms <= max_idle_ms:
            return False
        self._close(f"idle for more than {max_idle_ms} ms (connections.max.idle.ms)")
        return True

    def buffer_updated(self, nbytes: int) -> None:
        self.last_active_ms = self.cluster.clock.now_ms()
        self._reader.feed(self._read_buffer[:nbytes])
        self._pump()
        self._reader.keep_unread()  # the read buffer is shared: keep what was not taken

    # -- framing and backpressure ------------------------------------------------

    def _may_take(self) -> bool:
        """Whether the client may have another request decoded: it is reading what it was sent."""
        if self._write_paused or len(self._backlog) >= MAX_QUEUED_REQUESTS:
            return False
        unsent = self._out_bytes + (self.transport.get_write_buffer_size() if self.transport is not None else 0)
        return unsent < MAX_UNSENT_BYTES

    def _pump(self) -> None:
        """Handle the frames that have arrived and send their answers, as far as the bounds allow.

        Answers are gathered and written once per round (one syscall for pipelined requests); a
        round that stopped at MAX_UNSENT_BYTES goes on once the socket took the answers.
        """
        while not self._closed:
            self._take_frames()
            answered = bool(self._out)
            self._flush()
            if not answered or not self._may_take():
                break
        self._update_reading()

    def _take_frames(self) -> None:
        while not self._closed and self._may_take():
            try:
                frame = self._reader.next_frame()
            except FrameError as exc:
                self._close(str(exc))
                return
            if frame is None:
                self._reserve_request_memory()
                break
            self._on_frame(frame)
            if self._reserved and not self._reader.receiving:
                self._release_request_memory()

    # -- queued.max.request.bytes ------------------------------------------------

    def _reserve_request_memory(self) -> None:
        """A frame has started arriving: hold its declared size in the pool, or stop reading until there is room."""
        size = self._reader.pending_frame_size
        if self._request_memory is None or size is None or self._reserved:
            return
        if self._request_memory.try_reserve(size, self._memory_freed):
            self._reserved = size
            self._memory_blocked = False
        else:
            self._memory_blocked = True

    def _release_request_memory(self) -> None:
        if self._reserved and self._request_memory is not None:
            reserved, self._reserved = self._reserved, 0
            self._request_memory.release(reserved)

    def _memory_freed(self) -> None:
        if self._closed:
            return
        self._reserve_request_memory()
        self._update_reading()

    def _update_reading(self) -> None:
        wanted = not self._closed and self._may_take() and not self._memory_blocked
        if wanted != self._reading and self.transport is not None and not self._closed:
            self._reading = wanted
            if wanted:
                self.transport.resume_reading()
            else:
                self.transport.pause_reading()

    # -- the pipeline --------------------------------------------------------

    def _on_frame(self, frame: bytes | memoryview) -> None:
        if self._log_requests:
            self._note_request(frame)
        if self.control is not None and not self._closed:
            ticket = self.control.on_request(frame, self.node.node_id)
            self._unhandled.append(ticket)
            self._unanswered.append(ticket)
        if self._waiting or self._backlog:
            self._backlog.append(bytes(frame))  # the scratch will be reused: keep a copy
            return
        self._process(frame)

    def _process(self, frame: bytes | memoryview) -> None:
        if self._closed:
            return
        ticket = self._unhandled.popleft() if self.control is not None else None
        try:
            adjust = self.control.adjuster(ticket) if self.control is not None and ticket is not None else None
            outcome = handle_frame(memoryview(frame), self.cluster, self.node, self.client_host, adjust)
        except CloseConnection as exc:
            self._close(str(exc))
            return
        except KafkaError as exc:
            self._close(f"refused: {exc.code.name}: {exc.message}")
            return
        except Exception as exc:
            # one line at INFO like every close; the traceback only with --log-level DEBUG
            log.debug("request from %s failed", self.peer, exc_info=True)
            self._close(f"internal error: {type(exc).__name__}: {exc}")
            return
        if self.control is not None and ticket is not None and not isinstance(outcome, NoReply):
            rule = self.control.after_handling(ticket)
            if rule is not None and rule.action == "drop":
                self._close(f"fault injection: dropped the response to api key {rule.api_key}")
                return
            if isinstance(outcome, Reply) and rule is not None:
                log.info("fault injection: delaying a response to %s by %d ms", self.peer, rule.delay_ms)
                self._postpone(outcome.data, lambda send: _call_after(rule.delay_ms / 1000, send))
                return
            if isinstance(outcome, Reply) and self.control.must_hold(ticket):
                control = self.control
                self._postpone(outcome.data, lambda send: control.park(ticket, send))
                return
        if isinstance(outcome, Reply):
            self._respond(outcome.data)
        elif isinstance(outcome, NoReply):
            self._respond(None)
        elif isinstance(outcome, Deferred):
            self._wait_for(outcome)

    def _postpone(self, data: bytes, schedule: Callable[[Callable[[], None]], object]) -> None:
        """Send `data` when `schedule` calls back; later requests on this connection wait their turn."""
        self._waiting = True

        def send() -> None:
            if self._closed:
                return
            self._waiting = False
            self._respond(data)
            while self._backlog and not self._waiting and not self._closed:
                self._process(self._backlog.popleft())
            self._pump()  # and the frames held back while the backlog was full

        schedule(send)

    def _wait_for(self, deferred: Deferred) -> None:
        self._waiting = True
        pending = deferred.pending
        loop = asyncio.get_running_loop()
        delay = max(pending.deadline_ms - self.cluster.clock.now_ms(), 0) / 1000
        self._timer = loop.call_later(delay, pending.complete)

        def finished(_pending: object) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            # Answer from the loop, never from inside the append that woke us.
            loop.call_soon(self._answer_deferred, deferred)

        pending.add_done_callback(finished)

    def _answer_deferred(self, deferred: Deferred) -> None:
        self._waiting = False
        if self._closed:
            return
        try:
            data = deferred.encode(deferred.pending.result())
        except Exception as exc:
            log.debug("building a deferred response for %s failed", self.peer, exc_info=True)
            self._close(f"internal error: {type(exc).__name__}: {exc}")
            return
        self._respond(data)
        while self._backlog and not self._waiting and not self._closed:
            self._process(self._backlog.popleft())
        self._pump()  # and the frames held back while the backlog was full

    def _respond(self, data: bytes | None) -> None:
        """The answer to the oldest unanswered request (None: it gets none, as acks=0 Produce)."""
        if self._log_requests:
            self._log_answer(data)
        if self._unanswered and self.control is not None:
            self.control.on_answered(self._unanswered.popleft())
        if data is not None:
            self._out.append(data)
            self._out_bytes += len(data)

    # -- the request log (DEBUG) -------------------------------------------------

    def _note_request(self, frame: bytes | memoryview) -> None:
        """Remember when a request arrived and what it is, for its line in the log once answered."""
        received = time.perf_counter()
        if len(frame) < _HEADER.size:
            self._logged.append((received, -1, -1, -1, None))  # the connection closes on it; never logged
            return
        api_key, api_version, correlation_id, client_len = _HEADER.unpack_from(frame, 0)
        client_id = None
        if client_len >= 0:
            client_id = bytes(frame[_HEADER.size : _HEADER.size + client_len]).decode("utf-8", "replace")
        self._logged.append((received, api_key, api_version, correlation_id, client_id))

    def _log_answer(self, data: bytes | None) -> None:
        """One line for the oldest request: who asked what, how long the answer took, the error it reports."""
        if not self._logged:
            return
        received, api_key, api_version, correlation_id, client_id = self._logged.popleft()
        self._served += 1
        latency_ms = (time.perf_counter() - received) * 1000
        error: int | str = "none" if data is None else _error_code(api_key, api_version, data)
        try:
            name = api_name(api_key)
        except KeyError:
            name = f"API_{api_key}"
        log.debug("request from %s client_id=%s api=%s v%d correlation_id=%d latency_ms=%.3f error_code=%s",
                  self.peer, client_id, name, api_version, correlation_id, latency_ms, error)

    def _forget_tickets(self) -> None:
        """The connection is gone: its requests are no longer outstanding."""
        if self.control is not None:
            while self._unanswered:
                self.control.on_answered(self._unanswered.popleft())
        self._unhandled.clear()

    def _flush(self) -> None:
        """Send what was gathered: one write (one syscall) for a burst of pipelined answers."""
        if not self._out:
            return
        out, self._out = self._out, []
        self._out_bytes = 0
        self.last_active_ms = self.cluster.clock.now_ms()
        if self.transport is not None and not self._closed:
            self.transport.write(out[0] if len(out) == 1 else b"".join(out))

    def _close(self, reason: str) -> None:
        if self._closed:
            return
        log.info("closing connection from %s: %s", self.peer, reason)
        self._flush()
        self._closed = True
        self._backlog.clear()
        self._forget_tickets()
        if self.transport is not None:
            self.transport.close()
