"""The connection state machine (server/connection.py) with plain bytes: no sockets, no event loop."""

from __future__ import annotations

import struct
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from minibroker.server.connection import NEED_DATA, PAUSED, Closed, Connection, Request
from minibroker.server.quotas import RequestMemory

MAX_FRAME = 100 * 1024 * 1024


def frame(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


class Clock:
    def __init__(self) -> None:
        self.ms = 1_000

    def __call__(self) -> int:
        return self.ms


class Hook:
    """Records what the connection tells it; tokens are the request bodies."""

    def __init__(self) -> None:
        self.seen: list[bytes] = []
        self.sent: list[bytes] = []

    def request_seen(self, frame: memoryview | bytes, node_id: int) -> bytes:
        self.seen.append(bytes(frame))
        return bytes(frame)

    def before_handling(self, token: Any) -> None:
        return None

    def answer_ready(self, token: Any, send: Any) -> str:
        return "send"

    def answer_sent(self, token: bytes) -> None:
        self.sent.append(token)


def connection(**kwargs: Any) -> Connection:
    kwargs.setdefault("now_ms", Clock())
    return Connection(kwargs.pop("max_frame_bytes", MAX_FRAME), **kwargs)


def take(conn: Connection) -> Request:
    event = conn.next_event()
    assert isinstance(event, Request), event
    return event


def sent_bytes(conn: Connection) -> bytes:
    return b"".join(bytes(part) for part in conn.data_to_send())


# -- framing -------------------------------------------------------------------------------------


def test_a_frame_that_arrives_whole_is_handed_out_without_a_copy() -> None:
    conn = connection()
    chunk = bytearray(frame(b"request-1"))
    conn.receive_data(memoryview(chunk))
    request = take(conn)
    assert bytes(request.frame) == b"request-1"
    assert isinstance(request.frame, memoryview) and request.frame.obj is chunk
    assert not request.owned  # the read buffer is reused: what is kept of it must be copied


def test_a_frame_assembled_over_several_reads_or_queued_is_the_requests_own() -> None:
    conn = connection()
    data = frame(b"split") + frame(b"behind")
    conn.receive_data(data[:6])
    assert conn.next_event() is NEED_DATA
    conn.keep_unread()
    conn.receive_data(memoryview(bytearray(data[6:])))
    split = take(conn)
    assert bytes(split.frame) == b"split" and split.owned  # its buffer was the reader's and is not reused
    assert conn.next_event() is PAUSED
    conn.send_answer(b"a1")
    behind = take(conn)
    assert bytes(behind.frame) == b"behind" and behind.owned and isinstance(behind.frame, bytearray)


def test_a_frame_split_at_every_byte_comes_out_once_complete() -> None:
    conn = connection()
    data = frame(b"abcdef")
    for byte in data[:-1]:
        conn.receive_data(bytes([byte]))
        assert conn.next_event() is NEED_DATA
        conn.keep_unread()
    conn.receive_data(data[-1:])
    assert bytes(take(conn).frame) == b"abcdef"


def test_a_size_prefix_of_100_mb_holds_only_what_arrived() -> None:
    conn = connection()
    conn.receive_data(struct.pack(">i", 100 * 1024 * 1024) + b"x" * 10)
    assert conn.next_event() is NEED_DATA
    conn.keep_unread()
    assert conn.buffered_bytes < 100


def test_a_frame_larger_than_socket_request_max_bytes_closes_the_connection() -> None:
    conn = connection(max_frame_bytes=1000)
    conn.receive_data(struct.pack(">i", 1001))
    event = conn.next_event()
    assert isinstance(event, Closed) and "socket.request.max.bytes" in event.reason
    assert conn.closed and conn.next_event() == event


def test_a_zero_or_negative_size_closes_the_connection() -> None:
    for size in (0, -5):
        conn = connection()
        conn.receive_data(struct.pack(">i", size))
        assert isinstance(conn.next_event(), Closed)


# -- order ---------------------------------------------------------------------------------------


def test_requests_behind_an_unanswered_one_wait_and_answers_leave_in_arrival_order() -> None:
    hook = Hook()
    conn = connection(hook=hook)
    conn.receive_data(frame(b"r1") + frame(b"r2") + frame(b"r3"))
    first = take(conn)
    assert conn.next_event() is PAUSED  # r1 is parked (a long poll, a held answer): r2 and r3 wait
    assert hook.seen == [b"r1", b"r2", b"r3"] and conn.queued_requests == 2
    conn.keep_unread()
    assert bytes(first.frame) == b"r1"
    conn.send_answer(b"a1")
    assert bytes(take(conn).frame) == b"r2"
    conn.send_answer(b"a2")
    assert bytes(take(conn).frame) == b"r3"
    conn.send_answer(b"a3")
    assert conn.next_event() is NEED_DATA
    assert sent_bytes(conn) == b"a1a2a3"
    assert hook.sent == [b"r1", b"r2", b"r3"]


def test_queued_requests_are_copies_so_the_read_buffer_can_be_reused() -> None:
    conn = connection()
    buffer = bytearray(frame(b"r1") + frame(b"r2"))
    conn.receive_data(memoryview(buffer))
    take(conn)
    assert conn.next_event() is PAUSED
    conn.keep_unread()
    buffer[:] = b"\xff" * len(buffer)
    conn.send_answer(b"a1")
    assert bytes(take(conn).frame) == b"r2"


def test_an_acks_0_produce_gets_no_bytes_but_counts_as_answered() -> None:
    hook = Hook()
    conn = connection(hook=hook)
    conn.receive_data(frame(b"produce-acks-0") + frame(b"metadata"))
    take(conn)
    conn.send_answer(None)
    assert hook.sent == [b"produce-acks-0"]
    take(conn)
    conn.send_answer(b"meta")
    assert sent_bytes(conn) == b"meta"


def test_an_answer_of_several_buffers_is_sent_as_those_buffers() -> None:
    conn = connection()
    conn.receive_data(frame(b"fetch"))
    take(conn)
    batch = bytearray(b"stored batch")
    conn.send_answer([b"head", batch])
    out = conn.data_to_send()
    assert out[1] is batch and conn.unsent_bytes == 0


def test_send_answer_without_a_request_is_a_programming_error() -> None:
    conn = connection()
    try:
        conn.send_answer(b"x")
    except RuntimeError:
        return
    raise AssertionError("send_answer accepted an answer to nothing")


# -- backpressure ------------------------------------------------------------------------------------


def test_beyond_max_queued_requests_no_more_frames_are_taken_and_reading_stops() -> None:
    hook = Hook()
    conn = connection(hook=hook, max_queued_requests=3)
    conn.receive_data(b"".join(frame(b"r%d" % i) for i in range(10)))
    take(conn)
    assert conn.next_event() is PAUSED
    conn.keep_unread()
    assert conn.queued_requests == 3 and len(hook.seen) == 4  # the other six are bytes, not requests
    assert not conn.reading_wanted
    conn.send_answer(b"a")
    take(conn)
    assert conn.next_event() is PAUSED and conn.queued_requests == 3 and len(hook.seen) == 5
    assert not conn.reading_wanted


def test_a_client_that_does_not_read_its_answers_stops_being_read() -> None:
    conn = connection(max_unsent_bytes=100)
    conn.receive_data(b"".join(frame(b"fetch") for _ in range(5)))
    take(conn)
    conn.send_answer(b"x" * 100)
    assert not conn.may_take_frames and conn.next_event() is PAUSED and not conn.reading_wanted
    conn.data_to_send()
    conn.socket_buffered = 100  # the socket has not passed it on either
    assert conn.next_event() is PAUSED and not conn.reading_wanted
    conn.socket_buffered = 0  # the client read it
    assert conn.reading_wanted and isinstance(conn.next_event(), Request)


def test_a_client_streaming_frames_behind_a_waiting_request_is_read_no_further_than_max_queued_bytes() -> None:
    # Kafka mutes a channel from a complete request until its answer is sent; here a connection may
    # take `max_queued_bytes` more behind it (test control sees pipelined requests), and no more
    conn = connection(max_queued_bytes=4096)
    conn.receive_data(frame(b"long poll"))
    take(conn)  # it waits
    stream = b"".join(frame(b"%04d" % i + b"p" * 996) for i in range(200))
    received = 0
    while conn.reading_wanted and received < len(stream):  # as the adapter reads: at most read_room bytes
        room = conn.read_room
        size = 64 * 1024 if room is None else room
        conn.receive_data(bytearray(stream[received : received + size]))
        received += size
        assert conn.next_event() is PAUSED
        conn.keep_unread()
    assert conn.answering and received <= 4096
    assert conn.buffered_bytes <= 4096 and conn.read_room == 0
    conn.send_answer(b"answer")  # the answer is sent: the connection is read again, in order
    assert conn.reading_wanted and conn.read_room is None
    assert bytes(take(conn).frame).startswith(b"0000")


def test_nothing_limits_reads_while_no_request_waits() -> None:
    conn = connection(max_queued_bytes=10)
    assert conn.read_room is None
    conn.receive_data(b"".join(frame(b"x" * 100) for _ in range(3)))
    for _ in range(3):
        take(conn)
        conn.send_answer(b"a")
    assert conn.next_event() is NEED_DATA and conn.read_room is None and conn.reading_wanted


def test_a_paused_socket_stops_reading() -> None:
    conn = connection()
    conn.socket_paused = True
    conn.receive_data(frame(b"r1"))
    assert conn.next_event() is PAUSED and not conn.reading_wanted
    conn.socket_paused = False
    assert isinstance(conn.next_event(), Request)


def test_pipelined_answers_are_gathered_for_one_write() -> None:
    conn = connection()
    conn.receive_data(b"".join(frame(b"p%d" % i) for i in range(5)))
    for i in range(5):
        take(conn)
        conn.send_answer(b"a%d" % i)
    assert len(conn.data_to_send()) == 5 and conn.data_to_send() == []


# -- limits --------------------------------------------------------------------------------------------


def test_queued_max_request_bytes_holds_back_a_second_frame_until_the_first_is_in() -> None:
    memory = RequestMemory(100)
    woken: list[str] = []
    first = connection(request_memory=memory)
    second = connection(request_memory=memory, on_memory_freed=lambda: woken.append("second"))
    first.receive_data(struct.pack(">i", 80) + b"x" * 10)
    assert first.next_event() is NEED_DATA and first.reserved_request_bytes == 80
    second.receive_data(struct.pack(">i", 50) + b"y" * 10)
    assert second.next_event() is NEED_DATA and not second.reading_wanted
    first.receive_data(b"x" * 70)
    assert bytes(take(first).frame) == b"x" * 80
    assert memory.reserved == 50 and woken == ["second"] and second.reading_wanted
    assert second.reserved_request_bytes == 50


def test_a_frame_that_arrives_whole_reserves_nothing() -> None:
    memory = RequestMemory(10)
    conn = connection(request_memory=memory)
    conn.receive_data(frame(b"z" * 50))
    take(conn)
    assert memory.reserved == 0 and conn.reading_wanted


def test_queued_max_request_bytes_counts_the_bytes_held_behind_a_waiting_request() -> None:
    memory = RequestMemory(1000)
    woken: list[str] = []
    waiting = connection(request_memory=memory)
    other = connection(request_memory=memory, on_memory_freed=lambda: woken.append("other"))
    waiting.receive_data(frame(b"long poll") + b"".join(frame(b"q" * 96) for _ in range(8)))
    take(waiting)
    assert waiting.next_event() is PAUSED
    waiting.keep_unread()
    assert memory.reserved == waiting.reserved_request_bytes == waiting.buffered_bytes >= 8 * 96
    other.receive_data(struct.pack(">i", 300) + b"y" * 10)  # its frame does not fit beside them
    assert other.next_event() is NEED_DATA and not other.reading_wanted
    waiting.send_answer(b"answer")
    for _ in range(8):
        take(waiting)
        waiting.send_answer(b"a")
    assert waiting.next_event() is NEED_DATA
    assert waiting.reserved_request_bytes == 0 and woken and other.reserved_request_bytes == 300 == memory.reserved


def test_closing_drops_the_bytes_held_behind_a_waiting_request() -> None:
    memory = RequestMemory(-1)
    conn = connection(request_memory=memory)
    conn.receive_data(frame(b"long poll") + b"".join(frame(b"q" * 1000) for _ in range(5)) + b"\x00\x00")
    take(conn)
    assert conn.next_event() is PAUSED
    conn.keep_unread()
    assert conn.buffered_bytes > 5000
    conn.close("connection lost")  # the client went away while its long poll waits
    assert conn.buffered_bytes == 0 and memory.reserved == 0 and conn.queued_requests == 0


def test_closing_gives_back_reserved_memory_and_every_unanswered_token() -> None:
    memory, hook = RequestMemory(-1), Hook()
    conn = connection(request_memory=memory, hook=hook)
    conn.receive_data(frame(b"r1") + frame(b"r2") + struct.pack(">i", 30) + b"partial")
    take(conn)
    assert conn.next_event() is PAUSED
    conn.keep_unread()
    # the partial frame at its declared size, and r2 as it was received
    assert conn.next_event() is PAUSED and memory.reserved == 30 + len(frame(b"r2"))
    conn.close("test")
    assert memory.reserved == 0 and sorted(hook.sent) == [b"r1", b"r2"]
    assert conn.next_event() == Closed("test")


def test_idle_expiry_counts_from_the_last_bytes_in_or_out_and_spares_a_waiting_request() -> None:
    clock = Clock()
    conn = connection(now_ms=clock)
    clock.ms += 600_001
    assert conn.idle_expired(clock.ms, 600_000)
    conn.receive_data(frame(b"long poll"))
    take(conn)
    clock.ms += 700_000
    assert not conn.idle_expired(clock.ms, 600_000)  # a request waits for its answer
    conn.send_answer(b"answer")
    conn.data_to_send()
    assert not conn.idle_expired(clock.ms, 600_000)
    clock.ms += 600_001
    assert conn.idle_expired(clock.ms, 600_000)


# -- any chunking, any answer timing --------------------------------------------------------------------


@given(
    bodies=st.lists(st.binary(min_size=1, max_size=40), min_size=1, max_size=12),
    cuts=st.lists(st.integers(min_value=1, max_value=30), max_size=40),
    answer_late=st.lists(st.booleans(), max_size=12),
)
def test_every_request_is_answered_once_in_arrival_order(bodies: list[bytes], cuts: list[int],
                                                         answer_late: list[bool]) -> None:
    hook = Hook()
    conn = connection(hook=hook, max_queued_requests=3)
    stream = b"".join(frame(body) for body in bodies)
    chunks, pos = [], 0
    for cut in cuts:
        chunks.append(stream[pos : pos + cut])
        pos += cut
    chunks.append(stream[pos:])
    late = iter(answer_late)
    waiting: Request | None = None
    handled: list[bytes] = []
    out = bytearray()

    def drain() -> None:
        nonlocal waiting
        while waiting is None:
            event = conn.next_event()
            if not isinstance(event, Request):
                return
            handled.append(bytes(event.frame))
            if next(late, False):
                waiting = event  # answered at the next chunk, as a long poll would be
            else:
                conn.send_answer(b"<" + bytes(event.frame) + b">")
        conn.next_event()

    for chunk in chunks:
        if waiting is not None:
            conn.send_answer(b"<" + bytes(waiting.frame) + b">")
            waiting = None
        while not conn.reading_wanted and conn.queued_requests:  # as the adapter, read only when wanted
            drain()
            if waiting is not None:
                conn.send_answer(b"<" + bytes(waiting.frame) + b">")
                waiting = None
        conn.receive_data(bytearray(chunk))
        drain()
        conn.keep_unread()
        out += sent_bytes(conn)
    while len(handled) < len(bodies) or waiting is not None:
        if waiting is not None:
            conn.send_answer(b"<" + bytes(waiting.frame) + b">")
            waiting = None
        drain()
    out += sent_bytes(conn)
    assert handled == bodies
    assert bytes(out) == b"".join(b"<" + body + b">" for body in bodies)
    assert hook.seen == bodies and hook.sent == bodies
