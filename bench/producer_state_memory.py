"""Bytes per retained batch in the idempotent producer state (issue: KIP-1269 broker side).

10,000 producers x 20 batches on one partition (window 20), measured with
tracemalloc over everything the producer state allocates, printed beside the
KIP's estimate for Kafka's JVM (about 36 bytes per BatchMetadata).
Run: .venv/bin/python bench/producer_state_memory.py
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from minibroker.core.producer_state import BatchMetadata, ProducerStateManager
from minibroker.protocol.records import BatchHeader

PRODUCERS = 10_000
BATCHES = 20
KAFKA_JVM_ESTIMATE = 36


def header(pid: int, seq: int) -> BatchHeader:
    return BatchHeader(0, 100, 0, 2, 0, 0, 0, 1_700_000_000_000, 1_700_000_000_000, pid, 0, seq, 1)


def main() -> None:
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    state = ProducerStateManager()
    offset = 0
    for seq in range(BATCHES):
        for pid in range(PRODUCERS):
            state.commit_append(header(pid, seq), offset, 1_700_000_000_000, window=BATCHES)
            offset += 1
    after = tracemalloc.take_snapshot()
    total = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    retained = sum(entry.batch_count for entry in state.producers.values())
    assert retained == PRODUCERS * BATCHES
    window_bytes = sum(len(entry._batches) for entry in state.producers.values())
    result = {
        "producers": PRODUCERS,
        "batches_per_producer": BATCHES,
        "bytes_per_retained_batch_total": round(total / retained, 1),
        "bytes_per_retained_batch_window_only": round(window_bytes / retained, 1),
        "kafka_jvm_estimate_bytes": KAFKA_JVM_ESTIMATE,
        "batch_metadata_fields": list(BatchMetadata.__dataclass_fields__),
    }
    print(f"{'':34}{'bytes/batch':>12}")
    print(f"{'minibroker, everything':34}{result['bytes_per_retained_batch_total']:>12}")
    print(f"{'minibroker, window bytes only':34}{result['bytes_per_retained_batch_window_only']:>12}")
    print(f"{'Kafka JVM (KIP-1269 estimate)':34}{KAFKA_JVM_ESTIMATE:>12}")
    out = Path(__file__).parent / "results" / "producer_state_memory.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
