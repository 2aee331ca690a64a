"""make test's scheduling: which modules share a worker scope, and the longest scopes leave the queue first."""

from __future__ import annotations

import pytest

from tests import worker_scopes
from tests.worker_scopes import LongestFirstQueue, scope_of


def test_spark_and_reference_modules_share_one_scope_each_and_others_are_their_module() -> None:
    assert scope_of("tests/spark/test_write.py::test_x") == scope_of("tests/spark/test_read.py::test_y") == "spark"
    assert scope_of("tests/differential/test_scenarios.py::test_live[api_versions]") == "kafka-reference"
    assert scope_of("tests/differential/test_cli_tools.py::test_tool[kafka-topics]") == "kafka-reference"
    assert scope_of("tests/unit/test_clock.py::test_advance") == "tests/unit/test_clock.py"


def test_the_queue_hands_out_the_heaviest_scope_first_and_equals_in_queued_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_scopes, "scope_weights", lambda: {"spark": 300.0, "b.py": 20.0})
    queue = LongestFirstQueue()
    for scope in ("a.py", "b.py", "c.py", "spark", "d.py"):
        queue[scope] = {f"{scope}::t": False}
    order = [queue.popitem(last=False)[0] for _ in range(len(queue))]
    assert order == ["spark", "b.py", "a.py", "c.py", "d.py"]


def test_popping_from_the_end_is_left_as_an_ordered_dict_does() -> None:
    queue = LongestFirstQueue(a={}, b={})
    assert queue.popitem()[0] == "b"
