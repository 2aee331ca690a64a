"""The differential suite's own machinery, without a JVM: scenarios load and encode, normalisation, the
field-by-field comparison and the ledger's rules (unexplained and stale both fail)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minibroker.protocol.messages import REQUESTS
from tests.reference.launcher import ReferenceKafka, ReferenceUnavailable

from .compare import (
    Difference,
    LedgerEntry,
    against_golden_where_kafka_moved,
    differences,
    judge,
    load_ledger,
    matches_golden_where_kafka_moved,
)
from .normalise import TIMESTAMP_TOLERANCE_MS, Normaliser
from .scenario import API_CLASSES, Scenario, Step, all_scenarios, build, lookup, substitute
from .test_cli_tools import TOOLS

NOW_MS = 1_800_000_000_000  # pinned: the normaliser compares timestamps with the step's send time
SCENARIOS = all_scenarios()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_every_step_of_every_scenario_encodes_at_its_version(scenario: Scenario) -> None:
    values: dict[str, object] = dict(scenario.make_vars())
    for step in scenario.steps:
        if step.raw is not None or step.answer_of is not None:  # raw bytes, or no request: nothing to encode
            continue
        for name in step.capture:  # what a broker would have answered
            values[name] = "5d0f2a4e-3c1b-4f7a-9e6d-8b2c1a0f9e37" if name.endswith("_id") else 0
        request_class = API_CLASSES[step.api]
        assert 0 <= step.version <= request_class.max_version, f"{scenario.name}/{step.name}"
        request = build(request_class, substitute(step.request, values))
        request.encode(version=step.version)  # build() refuses an unknown field name, encode() a value it cannot write


def test_every_ledger_entry_names_a_scenario_step_and_says_why() -> None:
    steps = {s.name: {step.name for step in s.steps} for s in SCENARIOS}
    steps.update({tool.name: {"output"} for tool in TOOLS})  # Kafka's CLI tools: one step, their output
    for entry in load_ledger():
        assert entry.scenario in steps, entry
        assert entry.step == "*" or entry.step in steps[entry.scenario], entry
        assert len(entry.reason.split()) >= 5, entry


def test_a_ledger_entry_saying_not_implemented_is_refused(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.json"
    ledger.write_text(json.dumps({"entries": [
        {"scenario": "s", "step": "a", "path": "x", "reason": "Not implemented yet in minibroker"}]}))
    with pytest.raises(ValueError, match="reason"):
        load_ledger(ledger)


def test_a_difference_not_in_the_ledger_fails_and_a_listed_one_passes() -> None:
    found = {"a": [Difference("topics[name=t].error_code", 0, 3)]}
    assert not judge("s", found, []).ok
    entry = LedgerEntry("s", "a", "topics[name=t]", "the reason this difference is intended")
    verdict = judge("s", found, [entry])
    assert verdict.ok and verdict.accepted == [("a", found["a"][0], entry)]


def test_a_ledger_entry_that_no_longer_differs_fails() -> None:
    entry = LedgerEntry("s", "*", "error_code", "the reason this difference is intended")
    verdict = judge("s", {"a": [], "b": []}, [entry])
    assert not verdict.ok and verdict.stale == [entry]
    assert "stale" in verdict.report()


def test_a_ledger_entry_covers_its_path_and_below_not_a_sibling_with_a_longer_name() -> None:
    entry = LedgerEntry("s", "a", "topics[name=t].configs", "the reason this difference is intended")
    assert entry.accepts("topics[name=t].configs[name=x].value")
    assert entry.accepts("topics[name=t].configs")
    assert not entry.accepts("topics[name=t].configs_extra")


def test_keyed_arrays_compare_entry_by_entry_so_one_missing_entry_shifts_nothing() -> None:
    ours = {"api_keys": [{"api_key": 0, "max_version": 14}, {"api_key": 3, "max_version": 13}]}
    kafka = {"api_keys": [{"api_key": 0, "max_version": 13}, {"api_key": 1, "max_version": 18},
                          {"api_key": 3, "max_version": 13}]}
    assert differences(ours, kafka) == [
        Difference("api_keys[api_key=0].max_version", 14, 13),
        Difference("api_keys[api_key=1]", "<absent>", {"api_key": 1, "max_version": 18}),
    ]


def test_the_order_of_a_keyed_array_is_compared_too() -> None:
    ours = {"topics": [{"name": "a"}, {"name": "b"}]}
    kafka = {"topics": [{"name": "b"}, {"name": "a"}]}
    assert [d.path for d in differences(ours, kafka)] == ["topics#order"]


def test_null_empty_and_absent_are_three_different_values() -> None:
    assert differences({"records": None}, {"records": "hex:"}) == [Difference("records", None, "hex:")]
    assert differences({"a": []}, {"a": None}) == [Difference("a", [], None)]
    assert differences({"a": 1}, {}) == [Difference("a", 1, "<absent>")]
    assert differences({"a": True}, {"a": 1}) == [Difference("a", True, 1)]


def test_normalisation_names_each_brokers_own_choices_logically() -> None:
    answer = {
        "throttle_time_ms": 7, "cluster_id": "abc", "controller_id": 5,
        "brokers": [{"node_id": 5, "host": "127.0.0.1", "port": 40001, "rack": None}],
        "topics": [{"name": "diff-x-1234", "topic_id": "AAAAAAAAAAAAAAAAAAAAAA", "error_code": 3},
                   {"name": "other", "topic_id": "q1z2Xw9eS0a5b3c4d5e6fQ", "error_code": 0,
                    "partitions": [{"leader_id": 5, "replica_nodes": [5], "offline_replicas": [], "leader_epoch": 0}]}],
        "member_id": "consumer-1-2f0c6b8e-1d2a-4c5b-9e8f-0a1b2c3d4e5f", "producer_id": 4000, "session_id": 99,
        "log_append_time_ms": -1, "timestamp": NOW_MS - 1000, "max_timestamp": 1_700_000_000_000,
    }
    normal = Normaliser({"topic": "diff-x-1234"}).answer("Metadata", answer, NOW_MS)
    assert normal == {
        "throttle_time_ms": "<throttle>", "cluster_id": "<cluster>", "controller_id": "node:0",
        "brokers": [{"node_id": "node:0", "host": "<host>", "port": "<port>", "rack": None}],
        "topics": [{"name": "${topic}", "topic_id": "AAAAAAAAAAAAAAAAAAAAAA", "error_code": 3},
                   {"name": "other", "topic_id": "topic-id:0", "error_code": 0,
                    "partitions": [{"leader_id": "node:0", "replica_nodes": ["node:0"], "offline_replicas": [],
                                    "leader_epoch": 0}]}],
        "member_id": "consumer-1-<member:0>", "producer_id": "producer:0", "session_id": "session:0",
        "log_append_time_ms": -1, "timestamp": "<now>", "max_timestamp": 1_700_000_000_000,
    }


def test_a_timestamp_outside_the_tolerance_is_compared_as_it_is() -> None:
    late = NOW_MS + TIMESTAMP_TOLERANCE_MS + 1
    assert Normaliser({}).answer("Produce", {"log_append_time_ms": late}, NOW_MS) == {"log_append_time_ms": late}


def test_hash_map_ordered_arrays_are_sorted_before_comparison() -> None:
    kafka = {"finalized_features": [{"name": "transaction.version"}, {"name": "group.version"}]}
    normal = Normaliser({}).answer("ApiVersions", kafka, NOW_MS)
    assert [f["name"] for f in normal["finalized_features"]] == ["group.version", "transaction.version"]


def test_logical_names_follow_first_appearance_across_steps() -> None:
    names = Normaliser({})
    first = names.answer("Metadata", {"topics": [{"topic_id": "B" * 22}, {"topic_id": "C" * 22}]}, NOW_MS)
    second = names.answer("Fetch", {"responses": [{"topic_id": "C" * 22}]}, NOW_MS)
    assert [t["topic_id"] for t in first["topics"]] == ["topic-id:0", "topic-id:1"]
    assert second["responses"][0]["topic_id"] == "topic-id:1"


def test_placeholders_and_paths() -> None:
    values = {"topic": "diff-a-1", "topic_id": object()}
    request = substitute({"topics": [{"name": "${topic}", "topic_id": "${topic_id}", "x": "p-${topic}"}]}, values)
    assert request == {"topics": [{"name": "diff-a-1", "topic_id": values["topic_id"], "x": "p-diff-a-1"}]}
    answer = {"topics": [{"name": "a", "partitions": [{"partition_index": 1, "error_code": 6}]}]}
    assert lookup(answer, "topics[0].partitions[partition_index=1].error_code") == 6
    assert lookup(answer, "topics[3].name") is None


def test_every_api_the_codec_knows_can_be_named_in_a_scenario() -> None:
    assert {cls.API_KEY for cls in API_CLASSES.values()} == set(REQUESTS)
    assert API_CLASSES["Metadata"].API_KEY == 3 and API_CLASSES["CreateTopics"].API_KEY == 19


def test_a_release_not_installed_is_unavailable_not_started() -> None:
    with pytest.raises(ReferenceUnavailable, match="0.0.1"):
        ReferenceKafka.start("0.0.1")


def test_a_raw_step_sends_its_header_and_body_or_its_frame_as_given() -> None:
    header = Step("s", raw={"api_key": 18, "api_version": 99, "tagged_fields": True, "body_hex": "00"})
    assert header.raw_frame("c", 7) == bytes.fromhex("0000000d" "0012" "0063" "00000007" "0001" "63" "00" "00")
    assert header.sent == (18, 99)
    assert Step("s", raw={"frame_hex": "001200"}).raw_frame("c", 7) == bytes.fromhex("00000003001200")
    assert Step("s", raw={"frame_size": 104857601}).raw_frame("c", 7) == bytes.fromhex("06400001")


def _write_scenario(tmp_path: Path, steps: list[dict[str, object]]) -> Path:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"steps": steps}))
    return path


def test_a_step_sent_for_later_needs_a_later_step_reading_its_answer_on_a_quiet_connection(tmp_path: Path) -> None:
    join = {"name": "join", "api": "Heartbeat", "version": 4, "connection": "b", "expect": "later",
            "request": {"group_id": "g", "generation_id": 1, "member_id": "m", "group_instance_id": None}}
    other = {**join, "name": "other", "expect": "answer"}
    with pytest.raises(ValueError, match="no later step reads"):
        Scenario.load(_write_scenario(tmp_path, [join]))
    with pytest.raises(ValueError, match="use the connection"):
        Scenario.load(_write_scenario(tmp_path, [join, other, {"name": "read", "answer_of": "join"}]))
    loaded = Scenario.load(_write_scenario(tmp_path, [join, {"name": "read", "answer_of": "join"}]))
    read = loaded.steps[1]
    assert (read.api, read.version, read.connection, read.sent) == ("Heartbeat", 4, "b", (12, 4))
    assert loaded.steps[0].sent is None  # the reading step stands for it in the report


def _step(name: str, epoch: int, error: int = 0) -> dict:
    return {"name": name, "outcome": "answer", "answer": {"member_epoch": epoch, "error_code": error}}


def test_where_a_loaded_kafka_left_its_golden_minibroker_is_held_to_the_golden() -> None:
    # the live Kafka answered epoch 3 where its golden (a quiet run) says 2; minibroker answers 2
    golden, kafka = [_step("join", 2)], [_step("join", 3)]
    ours = [_step("join", 2)]
    found = {"join": [Difference("member_epoch", 2, 3)]}
    assert against_golden_where_kafka_moved(found, ours, kafka, golden) == {"join": []}
    assert matches_golden_where_kafka_moved(ours, kafka, golden)
    # minibroker answering neither the live Kafka nor the golden still differs, and the golden check fails
    wrong = [_step("join", 4)]
    found = {"join": [Difference("member_epoch", 4, 3)]}
    assert against_golden_where_kafka_moved(found, wrong, kafka, golden) == found
    assert not matches_golden_where_kafka_moved(wrong, kafka, golden)
    # a field Kafka did not move is compared with the live Kafka as always
    found = {"join": [Difference("error_code", 16, 0)]}
    assert against_golden_where_kafka_moved(found, [_step("join", 2, 16)], kafka, golden) == found
