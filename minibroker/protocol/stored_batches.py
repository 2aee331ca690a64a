"""Stored record batches inside an encoded response, never copied: a Fetch answer as a list of buffers.

kafka-python's engine copies every `records` value into its encode buffer (about 1.5 ms per MB
here). Instead, each `records` field holding `StoredBatches` is encoded as a 16-byte
placeholder, and the encoded body is cut at the placeholders: the answer goes to the socket as
the body's pieces with the stored batches themselves between them (one writev, no join).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from typing import Any

from kafka.protocol.schemas.fields.codecs import UnsignedVarInt32

Buffer = bytes | bytearray | memoryview

_PLACEHOLDER_SIZE = 16
_LENGTH = struct.Struct(">i")


class StoredBatches(list[Buffer]):
    """Record batches as stored, to be sent back to back as they are (a `records` field's value)."""

    @property
    def size(self) -> int:
        return sum(len(batch) for batch in self)

    def __bytes__(self) -> bytes:
        return b"".join(self)


def _length_prefix(size: int, flexible: bool) -> bytes:
    """A non-null `records` field's length: compact (uvarint of size + 1) in flexible versions, else int32."""
    return UnsignedVarInt32.encode(size + 1) if flexible else _LENGTH.pack(size)


def encode_with_stored_batches(message: Any, version: int, flexible: bool, holders: Iterable[Any]) -> list[Buffer]:
    """Encode `message` at `version`; the `records` of each of `holders` that are StoredBatches are not copied.

    Returns the body as buffers to write back to back.
    """
    spliced: list[tuple[Any, StoredBatches]] = [
        (holder, holder.records) for holder in holders if isinstance(holder.records, StoredBatches) and holder.records
    ]
    if not spliced:
        return [message.encode(version=version)]
    nonce = os.urandom(_PLACEHOLDER_SIZE - 4)
    placeholders = [nonce + index.to_bytes(4, "big") for index in range(len(spliced))]
    for (holder, _batches), placeholder in zip(spliced, placeholders, strict=True):
        holder.records = placeholder
    try:
        body = bytes(message.encode(version=version))
    finally:
        for holder, batches in spliced:
            holder.records = batches
    placeholder_prefix = _length_prefix(_PLACEHOLDER_SIZE, flexible)
    # the engine writes fields in its own order, not necessarily the order the holders were given
    found = sorted((body.find(placeholder), index) for index, placeholder in enumerate(placeholders))
    parts: list[Buffer] = []
    pos = 0
    for at, index in found:
        start = at - len(placeholder_prefix)
        if at < 0 or body[start:at] != placeholder_prefix:
            raise RuntimeError("a records placeholder was not encoded as a records field")
        batches = spliced[index][1]
        parts.append(body[pos:start])
        parts.append(_length_prefix(batches.size, flexible))
        parts.extend(batches)
        pos = at + _PLACEHOLDER_SIZE
    parts.append(body[pos:])
    return parts
