"""The coverage report (report.py) counts what the scenarios and their goldens hold."""

from __future__ import annotations

from minibroker.apis import advertised_ranges

from .compare import leaf_count
from .golden import ANSWERED, CLOSED
from .report import coverage, markdown, refused, versions_text
from .scenario import all_scenarios


def test_versions_are_printed_as_ranges() -> None:
    assert versions_text([0, 1, 2, 3, 4, 6]) == "0-4, 6"
    assert versions_text({11, 1}) == "1, 11"
    assert versions_text([]) == "—"


def test_a_step_is_a_refusal_when_kafka_closed_or_put_an_error_code_anywhere() -> None:
    assert refused({"outcome": CLOSED, "answer": None})
    assert refused({"outcome": ANSWERED, "answer": {"topics": [{"name": "t", "error_code": 0},
                                                              {"name": "u", "error_code": 3}]}})
    assert not refused({"outcome": ANSWERED, "answer": {"error_code": 0, "topics": [{"error_code": 0}]}})


def test_fields_compared_are_the_leaves_of_an_answer() -> None:
    assert leaf_count({"a": 1, "b": [{"c": 2}, {"c": 3}], "d": [], "e": None}) == 5
    assert leaf_count(None) == 1  # a closed connection: its outcome is compared


def test_the_report_covers_every_served_api_and_counts_every_step() -> None:
    scenarios = all_scenarios()
    report = coverage(scenarios=scenarios)
    assert report.steps == sum(len(s.steps) for s in scenarios)
    assert {row.key for row in report.apis} >= {key for key, _, _ in advertised_ranges()}
    assert any(row.answered for row in report.apis) and any(row.refused for row in report.apis)
    text = markdown(report)
    for row in report.apis:
        assert f"| {row.name} ({row.key}) |" in text
