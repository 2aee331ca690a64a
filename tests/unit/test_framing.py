"""FrameReader: Kafka's size-prefixed framing without sockets."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibroker.server.framing import FrameError, FrameReader

MAX = 100 * 1024 * 1024


def framed(*bodies: bytes) -> bytes:
    return b"".join(struct.pack(">i", len(body)) + body for body in bodies)


def test_whole_frames_in_one_chunk_come_out_in_order_without_copies() -> None:
    reader = FrameReader(MAX)
    chunk = bytearray(framed(b"first", b"second"))
    reader.feed(chunk)
    frames = list(reader.frames())
    assert [bytes(f) for f in frames] == [b"first", b"second"]
    assert frames[0].obj is chunk  # a view into what was fed
    assert reader.buffered == 0 and not reader.last_frame_owned


def test_a_frame_split_inside_its_size_prefix_and_body_is_joined() -> None:
    reader = FrameReader(MAX)
    data = framed(b"hello world")
    for piece in (data[:2], data[2:5], data[5:9]):
        reader.feed(piece)
        assert list(reader.frames()) == []
    reader.feed(data[9:])
    assert [bytes(f) for f in reader.frames()] == [b"hello world"]
    assert reader.last_frame_owned  # assembled in a buffer of its own, which the reader lets go


def test_a_huge_declared_size_holds_only_the_bytes_that_arrived() -> None:
    reader = FrameReader(MAX)
    reader.feed(struct.pack(">i", MAX) + b"abc")
    assert list(reader.frames()) == []
    assert reader.buffered == 7
    assert reader.pending_frame_size == MAX


@pytest.mark.parametrize("size", [0, -1, MAX + 1])
def test_a_size_outside_the_bound_is_refused_before_anything_is_held(size: int) -> None:
    reader = FrameReader(MAX)
    reader.feed(struct.pack(">i", size))
    with pytest.raises(FrameError, match=r"outside 1\.\.104857600 \(socket.request.max.bytes\)"):
        list(reader.frames())


def test_a_bad_size_after_a_partial_prefix_is_refused() -> None:
    reader = FrameReader(10)
    reader.feed(b"\x00\x00")
    assert reader.next_frame() is None
    reader.feed(b"\x00\x0b")
    with pytest.raises(FrameError):
        reader.next_frame()


def test_frames_left_untaken_survive_reuse_of_the_fed_buffer() -> None:
    reader = FrameReader(MAX)
    scratch = bytearray(framed(b"one", b"two", b"three"))
    reader.feed(scratch)
    assert bytes(reader.next_frame() or b"") == b"one"
    reader.keep_unread()  # the caller is about to reuse `scratch`
    scratch[:] = b"\xff" * len(scratch)
    assert [bytes(f) for f in reader.frames()] == [b"two", b"three"]


@given(st.lists(st.binary(min_size=1, max_size=50), min_size=1, max_size=20), st.data())
def test_any_split_of_the_stream_gives_the_same_frames(bodies: list[bytes], data: st.DataObject) -> None:
    stream = framed(*bodies)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    reader = FrameReader(MAX)
    out = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        reader.feed(stream[start:end])
        out += [bytes(f) for f in reader.frames()]
    assert out == bodies
    assert reader.buffered == 0
