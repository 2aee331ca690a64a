"""Consumer groups through KafkaJS 2.2.4 against a real broker process.

tests/clients/node/group_consume.js runs a group consumer (eachMessage) to N records, commits and disconnects;
tests/clients/node/admin.js runs the admin group operations. Records are produced with confluent-kafka.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import unique_topic
from tests.integration.clients import ClientRun, run_client
from tests.integration.clients import node_admin as admin
from tests.integration.clients import node_ok as ok
from tests.integration.groups_common import create_topic, produce, report_first_join

pytestmark = pytest.mark.kafkajs


def group_consume(node: Path, broker: Any, topic: str, group: str, expect: int,
                  linger_ms: int = 0) -> tuple[list[dict[str, Any]], ClientRun]:
    run = run_client(["node", "group_consume.js", broker.bootstrap_servers, topic, group, str(expect), str(linger_ms)],
                     cwd=node, broker=broker, timeout=90).check()
    events = run.lines()
    assert events[-1] == {"done": True, "count": events[-1]["count"], "timed_out": False}, run.describe()
    return events, run


def values(events: list[dict[str, Any]]) -> list[int]:
    return [int(e["value"].split("-")[1]) for e in events if e.get("event") == "record"]


def test_first_join_time(node: Path, broker: Any) -> None:
    topic = unique_topic("kjg-join")
    create_topic(broker, topic, 2)
    produce(broker, topic, 0, 4, 2)
    events, run = group_consume(node, broker, topic, unique_topic("kjg-join-group"), 4)
    joins = [e for e in events if e.get("event") == "group_join"]
    assert len(joins) == 1, run.describe()
    (join,) = joins
    assert join["is_leader"] and join["leader_id"] == join["member_id"], run.describe()
    assert join["protocol"] == "RoundRobinAssigner", run.describe()
    assert {t: sorted(p) for t, p in join["assignment"].items()} == {topic: [0, 1]}, run.describe()
    assert sorted(values(events)) == [0, 1, 2, 3]
    seconds = join["ms_from_connect"] / 1000
    report_first_join("kafkajs", seconds, from_run_s=join["ms_from_run"] / 1000, join_duration_ms=join["duration"])
    assert seconds < 10, run.describe()


def test_group_consume_commit_restart_resumes(node: Path, broker: Any) -> None:
    """eachMessage reads N records and commits; after a restart only the records produced since are read."""
    topic = unique_topic("kjg-resume")
    group = unique_topic("kjg-resume-group")
    create_topic(broker, topic, 3)
    produce(broker, topic, 0, 30, 3)

    events, run = group_consume(node, broker, topic, group, 30, linger_ms=500)
    assert sorted(values(events)) == list(range(30)), run.describe()
    (committed,) = [e for e in events if e.get("event") == "committed"]
    assert committed["offsets"] == {"0": 10, "1": 10, "2": 10}, run.describe()

    fetched, described, listed = admin(node, broker, ("fetchOffsets", {"groupId": group, "topics": [topic]}),
                                       ("describeGroups", [group]), ("listGroups",))
    (topic_offsets,) = ok(fetched)
    assert topic_offsets["topic"] == topic
    assert sorted((p["partition"], p["offset"]) for p in topic_offsets["partitions"]) == \
        [(0, "10"), (1, "10"), (2, "10")]
    (desc,) = ok(described)["groups"]
    assert (desc["groupId"], desc["state"], desc["protocolType"], desc["members"]) == (group, "Empty", "consumer", [])
    assert {"groupId": group, "protocolType": "consumer"} in ok(listed)["groups"]

    produce(broker, topic, 30, 21, 3)
    events, run = group_consume(node, broker, topic, group, 21, linger_ms=1500)
    got = sorted(values(events))
    assert got == list(range(30, 51)), f"expected exactly records 30..50 once, got {got}\n{run.describe()}"
    assert all(e["offset"] >= 10 for e in events if e.get("event") == "record")

    deleted, listed = admin(node, broker, ("deleteGroups", [group]), ("listGroups",))
    assert [(r["groupId"], r["errorCode"]) for r in ok(deleted)] == [(group, 0)]
    assert group not in [g["groupId"] for g in ok(listed)["groups"]]
