"""Kafka's size-prefixed framing as a sans-IO reader: bytes in, request frames out (no sockets, no loop).

A frame's memory grows as its bytes arrive: a 4-byte prefix announcing 100 MB costs 4 bytes
until the body comes, not 100 MB of zeroes (Kafka's NetworkReceive also allocates only once
the size is read, and then from its MemoryPool). A size outside 1..`socket.request.max.bytes`
(`sasl.server.max.receive.size` before a SASL client has authenticated) is refused as Kafka's
NetworkReceive refuses it (InvalidReceiveException), before anything is held; the refusal names
the setting that bounds it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

_SIZE = struct.Struct(">i")


class FrameError(Exception):
    """The peer sent a frame size Kafka would refuse; the connection must close."""


class FrameReader:
    """Splits a byte stream into request frames.

    `feed(chunk)` then `frames()`: complete frames come out in order as memoryviews, valid only
    until the next `feed` (they may point into `chunk`: a frame that arrives whole is never
    copied). Bytes of a frame still arriving are kept in a buffer of their own; such a frame
    is the reader's no more once returned (`last_frame_owned`), so what it holds may be kept
    without a copy.
    """

    def __init__(self, max_frame_bytes: int, max_frame_config: str = "socket.request.max.bytes") -> None:
        self.max_frame_bytes = max_frame_bytes
        self.max_frame_config = max_frame_config  # the setting max_frame_bytes comes from, for the refusal
        self._chunk: memoryview = memoryview(b"")  # fed bytes not yet split
        # the one incomplete frame (size prefix included) carried between feeds; while it is not
        # empty, every byte of the chunk has been taken into it
        self._partial = bytearray()
        self.last_frame_owned = False  # the frame returned last has a buffer of its own, not the fed chunk

    @property
    def buffered(self) -> int:
        """Bytes held: the unsplit rest of the last chunk and any incomplete frame."""
        return len(self._chunk) + len(self._partial)

    @property
    def receiving(self) -> bool:
        """Part of a frame has arrived and it is not complete yet."""
        return bool(self._partial)

    @property
    def pending_frame_size(self) -> int | None:
        """The declared size of the frame being received, once its prefix is in."""
        if len(self._partial) >= 4:
            return int(_SIZE.unpack_from(self._partial, 0)[0])
        return None

    def feed(self, chunk: bytes | bytearray | memoryview) -> None:
        """Take bytes as they arrive, after any the caller has not taken frames from yet."""
        if self._chunk:  # the caller held back (backpressure): join, a copy that only then happens
            self._chunk = memoryview(bytes(self._chunk) + bytes(chunk))
        else:
            self._chunk = memoryview(chunk)

    def next_frame(self) -> memoryview | None:
        """The next complete frame (without its size), or None until more bytes arrive; FrameError on a bad size."""
        if self._partial:
            return self._from_partial()
        chunk = self._chunk
        if len(chunk) < 4:
            self._keep_rest()
            return None
        size = self._checked_size(chunk)
        if len(chunk) - 4 < size:
            self._keep_rest()
            return None
        frame = chunk[4 : 4 + size]
        self._chunk = chunk[4 + size :]
        self.last_frame_owned = False
        return frame

    def frames(self) -> Iterator[memoryview]:
        """Every complete frame available now."""
        while (frame := self.next_frame()) is not None:
            yield frame

    def keep_unread(self) -> None:
        """Copy what was fed and not taken, so the caller may reuse the chunk's memory."""
        if self._chunk and not isinstance(self._chunk.obj, bytes):
            self._chunk = memoryview(bytes(self._chunk))

    def _keep_rest(self) -> None:
        self._partial += self._chunk
        self._chunk = memoryview(b"")
        if len(self._partial) >= 4:
            self._checked_size(self._partial)

    def _from_partial(self) -> memoryview | None:
        partial = self._partial
        if len(partial) < 4:
            take = min(4 - len(partial), len(self._chunk))
            partial += self._chunk[:take]
            self._chunk = self._chunk[take:]
            if len(partial) < 4:
                return None
        size = self._checked_size(partial)
        missing = 4 + size - len(partial)
        take = min(missing, len(self._chunk))
        partial += self._chunk[:take]
        self._chunk = self._chunk[take:]
        if take < missing:
            return None
        self._partial = bytearray()
        self.last_frame_owned = True
        return memoryview(partial)[4:]

    def _checked_size(self, data: bytes | bytearray | memoryview) -> int:
        (size,) = _SIZE.unpack_from(data, 0)
        if size <= 0 or size > self.max_frame_bytes:
            raise FrameError(f"frame size {size} is outside 1..{self.max_frame_bytes} ({self.max_frame_config})")
        return int(size)
