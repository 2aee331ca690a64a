"""Cost of validating produced batches record by record (core/log_validator.py), per batch.

For 16 KB batches of 16 and of 160 records, uncompressed and lz4, plus a 1 MB batch of 1000
records of 1000 bytes (what librdkafka sends in bench/produce.py), two paths are timed:

- before: what the produce path checked until issue 11, the batch framing, the 61-byte header
  (LogValidator.validateBatch's checks) and the CRC32C;
- after: the same plus the walk over every record (decompressing lz4 incrementally), the
  timestamp, key and offset checks and the recomputed maxTimestamp.

Each figure is the best of several repeats of this process's CPU time (the machine is shared), in
microseconds per batch;
the table also gives the added cost per record and, for 1000-byte records, the added broker CPU
seconds per GB of record values (10^6 records).
Run: .venv/bin/python bench/record_validation.py   (writes bench/results/record_validation.json)
"""

from __future__ import annotations

import json
import os
import platform
import struct
import sys
import time
import timeit
from pathlib import Path

import lz4.frame

from minibroker.core.log_validator import TopicPolicy, validate_batch, validate_batch_header
from minibroker.protocol import records

NOW = 1_700_000_000_000
TP = "bench-0"
POLICY = TopicPolicy(log_append_time=False, before_max_ms=2**63 - 1, after_max_ms=3_600_000, compacted=False,
                     max_message_bytes=1_048_588, recompressing=False)
CASES = [  # (records, value bytes, codec)
    (16, 1000, records.COMPRESSION_NONE),
    (160, 86, records.COMPRESSION_NONE),
    (16, 1000, records.COMPRESSION_LZ4),
    (160, 86, records.COMPRESSION_LZ4),
    (1000, 1000, records.COMPRESSION_NONE),
]
REPEATS = 15


def make_batch(count: int, value_size: int, codec: int) -> bytes:
    """Records as a Java producer writes them: null keys, random values, a few ms apart, no headers.

    lz4 as Kafka's KafkaLZ4BlockOutputStream and librdkafka write it: independent blocks, no checksums.
    """
    pairs: list[tuple[bytes | None, bytes | None]] = [(None, os.urandom(value_size)) for _ in range(count)]
    batch = records.build_batch(pairs, timestamps=[NOW - 1000 + i % 50 for i in range(count)])
    if codec != records.COMPRESSION_LZ4:
        return batch
    frame = lz4.frame.compress(batch[records.HEADER_SIZE:], block_linked=False, content_checksum=False)
    out = bytearray(batch[: records.HEADER_SIZE]) + frame
    struct.pack_into(">i", out, 8, len(out) - records.LOG_OVERHEAD)
    struct.pack_into(">h", out, 21, codec)
    struct.pack_into(">I", out, 17, records.compute_crc(out))
    return bytes(out)


def before(batch: bytes) -> None:
    """The checks of the produce path before issue 11: framing, header, CRC."""
    records.split_batches(batch)
    header = records.read_header(batch)
    if not records.crc_is_valid(batch, header):
        raise AssertionError("bad crc")
    validate_batch_header(header, TP)


def after(batch: bytes) -> None:
    """The same plus validating every record."""
    records.split_batches(batch)
    header = records.read_header(batch)
    if not records.crc_is_valid(batch, header):
        raise AssertionError("bad crc")
    validate_batch(batch, header, TP, POLICY, NOW)


def best_us(function: object, batch: bytes, count: int) -> float:
    number = max(1, 20_000 // count)
    # CPU time of this process, so time spent descheduled on a shared machine does not count
    timer = timeit.Timer(lambda: function(batch), timer=time.process_time)  # type: ignore[operator]
    return min(timer.repeat(repeat=REPEATS, number=number)) / number * 1e6


def main() -> None:
    rows = []
    header = (f"{'records':>8} {'value B':>8} {'codec':>6} {'batch B':>8} {'before us':>10} {'after us':>10} "
              f"{'added us':>9} {'ns/record':>10} {'CPU s/GB':>9}")
    print(header)
    for count, value_size, codec in CASES:
        batch = make_batch(count, value_size, codec)
        before_us = best_us(before, batch, count)
        after_us = best_us(after, batch, count)
        added = after_us - before_us
        per_record_ns = added * 1000 / count
        # added broker CPU seconds per 10^9 bytes of values
        per_gb = added / 1e6 * (1e9 / (count * value_size))
        row = {"records": count, "value_bytes": value_size, "codec": records.COMPRESSION_NAMES[codec],
               "batch_bytes": len(batch), "before_us": round(before_us, 2), "after_us": round(after_us, 2),
               "added_us": round(added, 2), "added_ns_per_record": round(per_record_ns, 1),
               "added_cpu_s_per_gb": round(per_gb, 3)}
        rows.append(row)
        print(f"{count:>8} {value_size:>8} {row['codec']:>6} {len(batch):>8} {before_us:>10.1f} {after_us:>10.1f} "
              f"{added:>9.1f} {per_record_ns:>10.0f} {per_gb:>9.3f}")
    result = {
        "environment": {"python": sys.version.split()[0], "machine": platform.machine(), "cpus": os.cpu_count(),
                        "load_average": os.getloadavg()},
        "method": f"best of {REPEATS} repeats of process CPU time; before = framing + header + CRC, "
                  "after = before + record validation",
        "rows": rows,
    }
    out = Path(__file__).parent / "results" / "record_validation.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
