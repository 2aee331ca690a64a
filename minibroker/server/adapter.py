"""The asyncio adapter of a connection: moves bytes between the socket and `Connection`, runs timers.

Every decision is sans-IO: framing, order, backpressure and limits are the state machine's
(connection.py); the connection-limit slot, the TLS principal and SASL are `Admission`'s (admission.py).
This module reads the socket when `reading_wanted` says so (as much as `read_room` allows), hands each
request to `Admission` and, unless SASL takes it, to `apis.dispatch.handle_frame` (with the request hook's
decoded body and adjustment: test control), arms the timer of a pending answer (or of a delayed authentication
failure), and writes what the state machine has to send. Connections come from the listener's acceptor
(acceptor.py), already counted against the connection limits; a TLS handshake runs before the first request.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..apis.context import CloseConnection, Session
from ..apis.dispatch import Answer, Deferred, NoReply, Reply, handle_frame
from ..core.cluster import Cluster
from ..core.cluster_model import Endpoint, Node
from ..protocol.errors import KafkaError
from .admission import Admission, AuthAnswer, close_reason, handshake_timeout_s, setup_failure
from .connection import NEED_DATA, SEND, Closed, Connection, DropConnection, Request, RequestHook
from .quotas import ConnectionQuotas, RequestMemory
from .request_log import RequestLog

if TYPE_CHECKING:  # authenticator.py and the SASL mechanisms load only for a SASL listener (broker.py)
    from .authenticator import SaslAuthenticator

log = logging.getLogger("minibroker.connection")

READ_BUFFER_SIZE = 256 * 1024  # one per broker, shared by its connections: reads land here

# a new connection's SaslAuthenticator, given how the listener answers ApiVersions
AuthenticatorFactory = Callable[[Callable[[memoryview], Answer]], "SaslAuthenticator"]


@dataclass(eq=False)
class Listener:
    """What the connections of one listener of a node share: the core, the listener's TLS and SASL, limits, the
    read buffer (one per broker), the request hook."""

    cluster: Cluster
    node: Node
    read_buffer: bytearray
    endpoint: Endpoint | None = None  # None: the node's first listener
    ssl_context: ssl.SSLContext | None = None  # SSL and SASL_SSL listeners
    principal_mapping_rules: str = "DEFAULT"  # ssl.principal.mapping.rules
    authenticator: AuthenticatorFactory | None = None  # SASL_PLAINTEXT and SASL_SSL listeners
    sasl_max_receive_size: int = 524288  # sasl.server.max.receive.size
    connections: set[ConnectionAdapter] = field(default_factory=set)
    # accepted and counted, transport not set up yet (a TLS handshake): reached by idle expiry and shutdown
    handshaking: set[ConnectionAdapter] = field(default_factory=set)
    hook: RequestHook | None = None
    quotas: ConnectionQuotas | None = None
    request_memory: RequestMemory | None = None


class ConnectionAdapter(asyncio.BufferedProtocol):
    """One client connection on the event loop (an asyncio protocol around `Connection`).

    Reads land in the broker's shared read buffer; the state machine takes whole frames straight
    from it and copies only what it has to keep, so an idle connection holds a few hundred bytes.
    """

    def __init__(self, listener: Listener, admitted_ip: str | None = None) -> None:
        self.listener = listener
        self.cluster = listener.cluster
        self.node = listener.node
        self.session = Session(listener=listener.endpoint.listener if listener.endpoint is not None else "PLAINTEXT")
        self.state = Connection(
            self.cluster.config["socket.request.max.bytes"], self.cluster.clock.now_ms, self.node.node_id,
            listener.hook, listener.request_memory, self._update_reading,
        )
        self.transport: asyncio.Transport | None = None
        self.peer = "?"
        self.client_host = ""
        self._setup: asyncio.Task[Any] | None = None  # the transport's set-up, TLS handshake included
        self._socket_taken = False  # the transport owns the accepted socket (and closes it)
        self._read_buffer = memoryview(listener.read_buffer)
        self._reading = True
        self._timer: asyncio.TimerHandle | None = None
        self._request_log: RequestLog | None = None  # with DEBUG logging, decided once per connection
        endpoint = listener.endpoint
        self.admission = Admission(
            self.state, self.session, self.cluster.config,
            security_protocol=endpoint.security_protocol if endpoint is not None else None,
            principal_mapping_rules=listener.principal_mapping_rules,
            authenticator=(listener.authenticator(self._api_versions_answer)
                           if listener.authenticator is not None else None),
            sasl_max_receive_size=listener.sasl_max_receive_size, quotas=listener.quotas, admitted_ip=admitted_ip)

    # -- setting up an accepted socket ----------------------------------------

    def start(self, sock: socket.socket, address: tuple[str, int]) -> None:
        """Serve a socket the acceptor admitted; on SSL and SASL_SSL listeners its TLS handshake comes first.

        Until the transport is set up the connection is in `listener.handshaking`, where the idle expiry
        reaches it (Kafka's Selector expires a channel still in its handshake) and so does shutdown.
        """
        self.peer = f"{address[0]}:{address[1]}"
        self.client_host = self.session.client_host = f"/{address[0]}"  # Kafka shows hosts as "/127.0.0.1"
        loop = asyncio.get_running_loop()
        context = self.listener.ssl_context
        if context is None:
            setup = loop.connect_accepted_socket(self._take_socket, sock)
        else:
            timeout = handshake_timeout_s(self.cluster.config["connections.max.idle.ms"])
            setup = loop.connect_accepted_socket(self._take_socket, sock, ssl=context, ssl_handshake_timeout=timeout)
        self.listener.handshaking.add(self)
        self._setup = loop.create_task(setup)
        self._setup.add_done_callback(lambda task: self._set_up(task, sock))

    def _take_socket(self) -> ConnectionAdapter:
        self._socket_taken = True  # the loop builds the transport around the socket right after this call
        return self

    def _set_up(self, task: asyncio.Task[Any], sock: socket.socket) -> None:
        """The transport is set up (connection_made ran), or it never will be: the connection ends here."""
        self._setup = None
        if self.transport is not None:
            return  # connection_lost gives back what the connection holds
        self.listener.handshaking.discard(self)
        self.admission.release()
        if not self._socket_taken:
            sock.close()  # cancelled before the loop took it
        if task.cancelled():
            return  # closed by _close (idle expiry, test control, shutdown), which logged why
        exc = task.exception()
        reason = setup_failure(exc)
        if reason is not None:
            log.info("closing connection from %s: %s", self.peer, reason)
        else:
            log.debug("connection from %s ended before it was set up: %r", self.peer, exc)
        self.state.close("connection not set up")

    # -- asyncio callbacks -------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's transports are not subclasses
        self.listener.handshaking.discard(self)
        self.listener.connections.add(self)
        if self.listener.ssl_context is not None and not self._authenticate_certificate(transport):
            return
        if log.isEnabledFor(logging.DEBUG):
            self._request_log = RequestLog(self.peer)
            log.debug("connection from %s opened on node %d", self.peer, self.node.node_id)

    def _authenticate_certificate(self, transport: asyncio.BaseTransport) -> bool:
        """Hand the peer's certificate to `Admission` (the handshake is over when asyncio calls connection_made)."""
        ssl_object = transport.get_extra_info("ssl_object")
        certificate = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        refused = self.admission.tls_established(certificate)
        if refused is None:
            return True
        log.info("closing connection from %s: %s", self.peer, refused.reason)
        transport.close()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.state.close("connection lost")
        self.admission.release()
        if self._request_log is not None:
            log.debug("connection from %s closed after %d requests", self.peer, self._request_log.served)
        self.listener.connections.discard(self)
        # a pending answer's timer stays: at its deadline it ends the wait as it would have with the client
        # still there, and the wait unregisters what it watches (a Fetch's partition logs)

    def get_buffer(self, sizehint: int) -> memoryview:
        room = self.state.read_room  # while a request waits, reads stop at what may be held behind it
        if room is None or room >= len(self._read_buffer):
            return self._read_buffer
        return self._read_buffer[: max(room, 1)]

    def buffer_updated(self, nbytes: int) -> None:
        self.state.receive_data(self._read_buffer[:nbytes])
        self._pump()
        self.state.keep_unread()  # the read buffer is shared: keep what was not taken

    def pause_writing(self) -> None:
        self.state.socket_paused = True

    def resume_writing(self) -> None:
        self.state.socket_paused = False
        self._note_socket_buffer()
        self._pump()

    # -- operations --------------------------------------------------------

    def drop(self, reason: str) -> None:
        """Close the connection now; requests not yet answered never will be (test control)."""
        self._close(reason)

    def abort(self) -> None:
        """Drop the connection at once (broker shutdown)."""
        self.state.close("broker shutdown")
        if self.transport is not None:
            self.transport.abort()
        elif self._setup is not None:
            self._setup.cancel()

    def close_if_idle(self, now_ms: int, max_idle_ms: int) -> bool:
        """Close the connection when `Connection.idle_expired` says so (connections.max.idle.ms)."""
        if not self.state.idle_expired(now_ms, max_idle_ms):
            return False
        self._close(f"idle for more than {max_idle_ms} ms (connections.max.idle.ms)")
        return True

    # -- moving requests and answers -------------------------------------------------

    def _pump(self) -> None:
        """Handle the requests the state machine hands out and write their answers, as far as it allows.

        Answers are gathered and written once per round (one syscall for pipelined requests); a round
        that stopped because the client had too much unread goes on once the socket took the answers.
        """
        state = self.state
        while not state.closed:
            while True:
                event = state.next_event()
                if isinstance(event, Request):
                    self._handle(event)
                elif isinstance(event, Closed):
                    self._close(event.reason)
                    return
                else:  # NEED_DATA or PAUSED
                    break
            # another round only when it stopped paused and the written answers let it go on
            if not self._flush() or event is NEED_DATA or not state.may_take_frames:
                break
        self._update_reading()

    def _handle(self, request: Request) -> None:
        if self._request_log is not None:
            self._request_log.request(request.frame)
        admitted = self.admission.receive(memoryview(request.frame))
        if admitted is not None:
            self._authenticated(admitted)
            return
        hook = self.listener.hook
        try:
            adjust = decoded = None
            if hook is not None:
                adjust, decoded = hook.before_handling(request.token), hook.decoded(request.token)
            outcome = handle_frame(memoryview(request.frame), self.cluster, self.node, self.session, adjust,
                                   frame_owned=request.owned, decoded=decoded)
        except Exception as exc:
            if not isinstance(exc, CloseConnection | KafkaError):
                # one line at INFO like every close; the traceback only with --log-level DEBUG
                log.debug("request from %s failed", self.peer, exc_info=True)
            self._close(close_reason(exc))
            return
        if isinstance(outcome, Reply):
            self._answer(request, outcome.data)
        elif isinstance(outcome, NoReply):
            self._send(None)
        elif isinstance(outcome, Deferred):
            self._wait_for(request, outcome)

    def _api_versions_answer(self, frame: memoryview) -> Answer:
        """ApiVersions before authentication, answered as on any listener."""
        outcome = handle_frame(frame, self.cluster, self.node, self.session)
        assert isinstance(outcome, Reply)
        return outcome.data

    def _authenticated(self, step: AuthAnswer | Closed) -> None:
        """Carry out what `Admission` made of a frame SASL took."""
        if isinstance(step, Closed):
            self._close(step.reason)
            return
        if step.close is None:
            self._send(step.answer)
            return
        reason = step.close

        def fail() -> None:
            self._send(step.answer)
            self._close(reason)

        if step.delay_ms == 0:
            fail()
        else:  # the request stays unanswered until then, and nothing behind it is handled meanwhile
            asyncio.get_running_loop().call_later(step.delay_ms / 1000, fail)

    def _answer(self, request: Request, data: Answer, later: bool = False) -> None:
        """Send an answer, unless the request hook (test control) says otherwise: LATER, it keeps the answer and
        calls back (holds, delays); DropConnection, the connection closes instead, after writing the answers
        ready before this one."""
        hook = self.listener.hook
        if hook is not None:
            verdict = hook.answer_ready(request.token, lambda: self._send(data, later=True))
            if isinstance(verdict, DropConnection):
                self._close(verdict.reason)
                return
            if verdict != SEND:
                return  # the hook calls back; the requests behind this one wait for it
        self._send(data, later)

    def _send(self, data: Answer | None, later: bool = False) -> None:
        if self.state.closed:
            return
        if self._request_log is not None:
            self._request_log.answered(data)
        self.state.send_answer(data)
        if later:
            self._pump()  # this answer, and the requests that waited behind it

    def _wait_for(self, request: Request, deferred: Deferred) -> None:
        """Arm the deadline of a pending answer (a long poll, a join); it is answered once the wait ends."""
        pending = deferred.pending
        loop = asyncio.get_running_loop()
        delay = max(pending.deadline_ms - self.cluster.clock.now_ms(), 0) / 1000
        self._timer = loop.call_later(delay, pending.complete)

        def finished(_pending: object) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            # Answer from the loop, never from inside the append that woke us.
            loop.call_soon(self._answer_deferred, request, deferred)

        pending.add_done_callback(finished)

    def _answer_deferred(self, request: Request, deferred: Deferred) -> None:
        """Encode the answer of a wait that ended (only now: it says what the wait found) and send it."""
        if self.state.closed:
            return
        try:
            data = deferred.encode(deferred.pending.result())
        except Exception as exc:
            log.debug("building a deferred response for %s failed", self.peer, exc_info=True)
            self._close(f"internal error: {type(exc).__name__}: {exc}")
            return
        if data is None:
            self._send(None, later=True)
        else:
            self._answer(request, data, later=True)

    def _flush(self) -> bool:
        """Write what the state machine has to send: one call (one syscall) for a burst of answers."""
        out = self.state.data_to_send()
        if not out or self.transport is None or self.transport.is_closing():
            return bool(out)
        if len(out) == 1:
            self.transport.write(out[0])
        else:
            self.transport.writelines(out)
        self._note_socket_buffer()
        return True

    def _note_socket_buffer(self) -> None:
        if self.transport is not None:
            self.state.socket_buffered = self.transport.get_write_buffer_size()

    def _update_reading(self) -> None:
        state = self.state
        wanted = state.reading_wanted
        if wanted != self._reading and self.transport is not None and not state.closed:
            self._reading = wanted
            if wanted:
                self.transport.resume_reading()
            else:
                self.transport.pause_reading()

    def _close(self, reason: str) -> None:
        """Send what is ready, then close (the state machine may have decided it already: a bad frame)."""
        if self.transport is None:  # still in its TLS handshake
            if self._setup is not None and not self.state.closed:
                log.info("closing connection from %s: %s", self.peer, reason)
                self.state.close(reason)
                self._setup.cancel()
            return
        if self.transport.is_closing():
            return
        log.info("closing connection from %s: %s", self.peer, reason)
        self._flush()
        self.state.close(reason)
        self.transport.close()
