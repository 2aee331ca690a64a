"""Audit stamps: each record names its producer and its per-producer sequence in two headers.

The project's benchmarks and fault tools stamp what they write this way, and
the exactly-once audit job reads the stamps back to find duplicates, gaps and
order violations per producer and partition.
"""

from __future__ import annotations

from collections.abc import Iterable

PRODUCER_HEADER = "audit.producer"  # UTF-8 producer name
SEQUENCE_HEADER = "audit.sequence"  # decimal ASCII, 0, 1, 2, ... per producer


def stamp(producer: str, sequence: int) -> list[tuple[str, bytes | None]]:
    """The headers that mark a record as number `sequence` of `producer`."""
    return [(PRODUCER_HEADER, producer.encode()), (SEQUENCE_HEADER, str(sequence).encode())]


def read_stamp(headers: Iterable[tuple[str, bytes | None]]) -> tuple[str, int] | None:
    """(producer, sequence) from a record's headers, or None when it carries no valid stamp."""
    producer: str | None = None
    sequence: int | None = None
    for key, value in headers:
        if value is None:
            continue
        if key == PRODUCER_HEADER:
            producer = value.decode("utf-8", "replace")
        elif key == SEQUENCE_HEADER and value.isdigit():
            sequence = int(value)
    if producer is None or sequence is None:
        return None
    return producer, sequence
