"""PartitionLog: offsets, reads, delete records, retention, timestamp lookup."""

from __future__ import annotations

import pytest

from minibroker.core.partition_log import PartitionLog
from minibroker.protocol import records
from minibroker.protocol.errors import KafkaError


def append(log: PartitionLog, count: int, timestamp: int = 1000) -> int:
    batch = bytearray(records.build_batch([(None, b"v%d" % i) for i in range(count)],
                                          timestamps=[timestamp + i for i in range(count)]))
    return log.append(batch, records.read_header(batch))


def test_offsets_are_assigned_contiguously_and_patched_into_the_batch():
    log = PartitionLog("t", 0)
    assert append(log, 3) == 0
    assert append(log, 2) == 3
    assert log.log_end_offset == log.high_watermark == 5
    stored = log.read(3, 1 << 20, min_one=True)
    assert records.read_header(stored[0]).base_offset == 3


def test_read_returns_whole_batches_within_max_bytes_but_at_least_one():
    log = PartitionLog("t", 0)
    for _ in range(5):
        append(log, 10)
    one = len(log.batches[0])
    assert len(log.read(0, one * 2, min_one=True)) == 2
    assert len(log.read(0, 1, min_one=True)) == 1
    assert log.read(0, 1, min_one=False) == []
    assert len(log.read(15, 1 << 20, min_one=True)) == 4  # batch holding offset 15 onwards
    with pytest.raises(KafkaError):
        log.read(51, 100, min_one=True)


def test_delete_records_moves_log_start_and_drops_whole_batches():
    log = PartitionLog("t", 0)
    for _ in range(3):
        append(log, 10)
    log.delete_records_before(15)
    assert log.log_start_offset == 15
    assert len(log.batches) == 2
    with pytest.raises(KafkaError):
        log.read(10, 100, min_one=True)


def test_retention_by_time_and_bytes():
    log = PartitionLog("t", 0)
    append(log, 1, timestamp=1000)
    append(log, 1, timestamp=5000)
    append(log, 1, timestamp=9000)
    log.apply_retention(now_ms=10_000, retention_ms=6000, retention_bytes=-1)
    assert log.log_start_offset == 1
    log.apply_retention(now_ms=10_000, retention_ms=-1, retention_bytes=len(log.batches[-1]))
    assert log.log_start_offset == 2
    assert log.log_end_offset == 3


def test_offset_for_timestamp_finds_first_record_at_or_after():
    log = PartitionLog("t", 0)
    append(log, 5, timestamp=100)  # 100..104
    append(log, 5, timestamp=200)  # 200..204
    assert log.offset_for_timestamp(102) == (2, 102)
    assert log.offset_for_timestamp(150) == (5, 200)
    assert log.offset_for_timestamp(999) is None
    assert log.max_timestamp_offset() == (9, 204)


def test_watchers_hear_announced_appends_until_unwatched():
    log = PartitionLog("t", 0)
    heard: list[int] = []
    unwatch = log.watch(heard.append)
    append(log, 1)
    assert heard == []  # the append's owner announces it once its state changes are done
    log.announce_append(70)
    unwatch()
    append(log, 1)
    log.announce_append(70)
    assert heard == [70]


def test_bytes_after_counts_stored_bytes_between_offsets_after_deletes() -> None:
    log = PartitionLog("t", 0)
    sizes = []
    for count in (1, 3, 2, 5):
        batch = bytearray(records.build_batch([(None, b"v" * 10 * count)] * count, timestamp=1))
        sizes.append(len(batch))
        log.append(batch, records.read_header(batch))
    assert log.bytes_after(0) == sum(sizes) == log.size_bytes
    assert log.bytes_after(2) == sum(sizes[1:])  # offset 2 lies inside the second batch (offsets 1-3)
    assert log.bytes_after(4, upper_bound=6) == sizes[2]
    assert log.bytes_after(11) == 0
    log.delete_records_before(4)
    assert log.size_bytes == sum(sizes[2:]) == log.bytes_after(4)
    log.apply_retention(now_ms=10, retention_ms=-1, retention_bytes=sizes[3])
    assert log.size_bytes == sizes[3] == log.bytes_after(0 + 6)
