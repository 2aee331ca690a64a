"""The pure parts of the four-broker benchmark (bench/compare.py, bench/produce.py): parsing Kafka's perf tools'
output, the medians and ratios of the summary, and the Markdown table. No broker is started."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
compare = pytest.importorskip("compare")
produce = pytest.importorskip("produce")

PRODUCER_OUT = """\
99361 records sent, 19868.2 records/sec (18.95 MB/sec), 3.1 ms avg latency, 210.0 ms max latency.
200000 records sent, 19992.0 records/sec (19.07 MB/sec), 2.84 ms avg latency, 210.00 ms max latency, \
2 ms 50th, 5 ms 95th, 12 ms 99th, 180 ms 99.9th.
"""

CONSUMER_OUT = """\
start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, \
fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
 (org.apache.kafka.common.config.AbstractConfig)
* Set the consumer configuration group.protocol=consumer to try it out.
2026-11-27 18:00:00:000, 2026-11-27 18:00:02:000, 286.1023, 143.0511, 300000, 150000.0000, 3012, 1988, \
143.9146, 150905.4326
"""


def test_producer_perf_summary_line_is_parsed() -> None:
    parsed = compare.parse_producer_perf(PRODUCER_OUT)
    assert parsed == {"records": 200000.0, "records_per_s": 19992.0, "mb_per_s": 19.07, "avg_ms": 2.84,
                      "max_ms": 210.0, "p50_ms": 2.0, "p95_ms": 5.0, "p99_ms": 12.0, "p999_ms": 180.0}


def test_producer_perf_with_warmup_records_gives_the_steady_state_line() -> None:
    # what kafka-producer-perf-test 4.3.1 printed with --warmup-records 5000 (its last two lines)
    out = PRODUCER_OUT + ("25000 steady state records sent, 5092.686902 records/sec (4.86 MB/sec), 13.07 ms avg "
                          "latency, 171.00 ms max latency, 3 ms 50th, 126 ms 95th, 168 ms 99th, 170 ms 99.9th.\n")
    parsed = compare.parse_producer_perf(out)
    assert parsed == {"records": 25000.0, "records_per_s": 5092.686902, "mb_per_s": 4.86, "avg_ms": 13.07,
                      "max_ms": 171.0, "p50_ms": 3.0, "p95_ms": 126.0, "p99_ms": 168.0, "p999_ms": 170.0}


def test_producer_perf_without_a_summary_line_gives_nothing() -> None:
    assert compare.parse_producer_perf(PRODUCER_OUT.splitlines()[0]) == {}


def test_consumer_perf_csv_is_parsed_past_log_lines_without_the_dates() -> None:
    parsed = compare.parse_consumer_perf(CONSUMER_OUT)
    assert parsed["nMsg.sec"] == 150000.0
    assert parsed["data.consumed.in.nMsg"] == 300000.0
    assert "start.time" not in parsed


def _run(broker: str, rate: float, cpu: float, error: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(client="java", partitions=1, broker=broker, records_per_s=rate, mb_per_s=rate / 1000,
                           p50_ms=1.0, p99_ms=2.0, cpu_s_per_gb=cpu, error=error)


def test_summary_gives_medians_and_minibroker_ratios_to_every_other_broker() -> None:
    runs = [_run("minibroker", 300, 2), _run("minibroker", 100, 4), _run("minibroker", 200, 3),
            _run("kafka", 100, 6), _run("kafka", 0, 0, error="broker exited"),
            _run("tansu", 400, 1)]
    [entry] = produce.summarize(runs, produce.SUMMARY_KEYS, ("minibroker", "kafka", "tansu"))
    assert entry["minibroker"]["records_per_s"] == 200
    assert entry["kafka"]["runs"] == 1  # the failed run is left out
    assert entry["ratios"]["kafka"] == {"throughput": 2.0, "cpu_per_gb": 0.5}
    assert entry["ratios"]["tansu"] == {"throughput": 0.5, "cpu_per_gb": 3.0}
    assert entry["throughput_ratio"] == 0.5  # the minibroker/Tansu pair plot.py draws


def test_markdown_table_has_a_column_per_broker_and_the_ratio_to_kafka() -> None:
    results = {"brokers": ["minibroker", "kafka"], "latency": {"rate": 20000, "median": {
        "minibroker": {"p50_ms": 1.0, "p99_ms": 4.0}, "kafka": {"p50_ms": 2.0, "p99_ms": 8.0}}}}
    table = compare.markdown_table(results)
    assert "| | minibroker | kafka | minibroker / kafka |" in table
    assert "| p99 ms | 4 | 8 | 0.50 |" in table


def test_client_records_override_the_common_count_for_one_client() -> None:
    args = produce.parse_args(["--records", "100000", "--client-records", "java=30000", "--clients", "confluent",
                               "java"])
    assert produce.client_records(args) == {"confluent": 100000, "java": 30000}
    with pytest.raises(SystemExit):
        produce.client_records(produce.parse_args(["--client-records", "kafka-go=5"]))


def test_typical_rows_show_where_a_test_spends_its_time() -> None:
    def sample(produce_ms: float) -> dict[str, object]:
        return {"median_test_ms": produce_ms + 210, "tests_run": 50, "median_phase_ms": {
            "create": 2.0, "produce": produce_ms, "consume": 203.0, "commit_close": 3.0, "delete": 2.0}}

    data = {"samples": {"minibroker": [sample(60)], "kafka": [sample(520)]},
            "median": {"minibroker": sample(60), "kafka": sample(520)}}
    results = {"brokers": ["minibroker", "kafka"], "typical": {"tests": 50, "clients": {"confluent": data}}}
    table = compare.markdown_table(results)
    assert "| confluent: one typical test, median ms | 270.0 | 730.0 | 0.37 |" in table
    assert "| confluent: ... produce, median ms | 60 | 520 | 0.12 |" in table
    assert "| confluent: ... commit and close, median ms | 3 | 3 | 1.00 |" in table


def test_an_update_keeps_the_sections_not_measured_again() -> None:
    earlier = {"brokers": ["minibroker", "kafka"], "startup": {"median": 1}, "memory": {"median": 2},
               "tools": {"median": 3}, "latency": {"median": 4},
               "section_seconds": {"startup": 40.0, "memory": 190.0, "tools and latency": 400.0},
               "section_runs": {"startup": "t1", "memory": "t1", "tools": "t1", "latency": "t1"}}
    kept = compare.other_sections(earlier, ["startup"])
    assert set(kept) == {"memory", "tools", "latency", "section_seconds", "section_runs"}
    assert kept["section_seconds"] == {"memory": 190.0, "tools and latency": 400.0}
    assert kept["section_runs"] == {"memory": "t1", "tools": "t1", "latency": "t1"}
    again = compare.other_sections(earlier, ["latency"])  # tools and latency shared their broker and their seconds
    assert "latency" not in again and "tools and latency" not in again["section_seconds"]


def test_an_update_drops_the_seconds_of_a_shared_broker_run_it_measures_again() -> None:
    # memory, tools and latency share one broker per round, and so one entry of seconds
    earlier = {"brokers": ["minibroker"], "startup": {"median": 1}, "memory": {"median": 2}, "tools": {"median": 3},
               "latency": {"median": 4},
               "section_seconds": {"startup": 40.0, "memory, tools and latency": 500.0},
               "section_runs": {"startup": "t1", "memory": "t1", "tools": "t1", "latency": "t1"}}
    kept = compare.other_sections(earlier, ["memory"])
    assert kept["section_seconds"] == {"startup": 40.0}
    assert set(kept) == {"startup", "tools", "latency", "section_seconds", "section_runs"}


def test_a_java_client_writes_its_class_archive_once_then_maps_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    brokers = pytest.importorskip("brokers")
    monkeypatch.setattr(brokers, "CDS_DIR", tmp_path / "cds")
    jar = tmp_path / "bench-java.jar"
    jar.write_bytes(b"first build")
    classpath = f"{jar}{os.pathsep}{tmp_path / 'libs'}/*"
    first = brokers.java_client_command(classpath, "ProduceBench", "a", jvm_options=("-Dx=1",))
    [write] = [option for option in first if option.startswith("-XX:ArchiveClassesAtExit=")]
    archive = Path(write.partition("=")[2])
    assert archive.parent == tmp_path / "cds" and archive.name.startswith("ProduceBench-")
    assert first[-4:] == ["-cp", classpath, "ProduceBench", "a"] and "-Dx=1" in first
    archive.write_bytes(b"archived")  # what the JVM leaves at its exit
    again = brokers.java_client_command(classpath, "ProduceBench", "a")
    assert f"-XX:SharedArchiveFile={archive}" in again
    assert not any(option.startswith("-XX:ArchiveClassesAtExit") for option in again)
    jar.write_bytes(b"a rebuild, longer")  # another jar: another archive, written anew
    rebuilt = brokers.java_client_command(classpath, "ProduceBench", "a")
    assert any(option.startswith("-XX:ArchiveClassesAtExit=") and archive.name not in option for option in rebuilt)
    other = brokers.java_client_command(classpath, "ConsumeBench")
    assert not any(archive.name in option for option in other)  # a program of its own


def test_kafka_storage_is_formatted_once_and_copied_for_later_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    brokers = pytest.importorskip("brokers")
    formatted: list[Path] = []

    def fake_format(config: Path, _java: list[str]) -> None:  # StorageTool's JVM, outside what is tested
        data = Path(next(line for line in config.read_text().splitlines() if line.startswith("log.dirs="))[9:])
        data.mkdir(parents=True)
        (data / "meta.properties").write_text("cluster.id=x\n")
        formatted.append(data)

    monkeypatch.setattr(brokers, "_format_storage", fake_format)
    monkeypatch.setattr(brokers, "_formatted_storage", [])
    from tests.reference import launcher

    monkeypatch.setattr(launcher, "jar_dir", lambda _version: Path("/kafka-jars"))  # only named in the command
    folders = []
    try:
        for format_storage in (False, False, True):
            _command, _port, folder = brokers._kafka_command("unit", format_storage)
            folders.append(folder)
            assert (folder / "data" / "meta.properties").read_text() == "cluster.id=x\n"
        # the template, then the explicit format of the third start: two formats for three starts
        assert len(formatted) == 2 and formatted[1] == folders[2] / "data"
        assert formatted[0].parent not in folders
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
