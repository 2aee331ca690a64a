"""Kafka's flexible-version primitives written by hand, for requests too large to build through the protocol
engine in a test's time (the tests check each layout against the engine at a small size)."""

from __future__ import annotations

import struct


def uvarint(value: int) -> bytes:
    """An unsigned varint."""
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def compact_string(text: str | None) -> bytes:
    """A COMPACT_(NULLABLE_)STRING: length + 1 as a varint, 0 for null."""
    if text is None:
        return b"\x00"
    data = text.encode()
    return uvarint(len(data) + 1) + data


def compact_bytes(data: bytes) -> bytes:
    """COMPACT_BYTES: length + 1 as a varint."""
    return uvarint(len(data) + 1) + data


def compact_array(entries: list[bytes]) -> bytes:
    """A COMPACT_ARRAY of entries already written: count + 1 as a varint."""
    return uvarint(len(entries) + 1) + b"".join(entries)


def request_frame(api_key: int, version: int, body: bytes, correlation_id: int = 1, client_id: str = "test") -> bytes:
    """A request frame without its size: header v2 (client id as INT16-length string, empty tagged fields)."""
    client = client_id.encode()
    return struct.pack(">hhih", api_key, version, correlation_id, len(client)) + client + b"\x00" + body
