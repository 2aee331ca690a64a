"""Scenarios of one release profile: tests/differential/scenarios/<release>/*.json, e.g. scenarios/3.9/.

What a Kafka release did that the reference release (4.3.1) no longer does (a topic config 4.0 removed, a
broker config that was dynamic, a group's authorized operations) is a scenario in the folder of the release
profile it belongs to (minibroker/apis/releases.py). Such a scenario is recorded from that release's Kafka
(tests/reference/launcher.py RELEASE_VERSIONS, e.g. 3.9.1) into goldens/<that version>/, and replayed
(test_release_scenarios.py) against a minibroker started `--as-version <release>`: no JVM at test time. The
top-level scenarios are the reference release's; the live comparison (test_scenarios.py) runs only those.

    .venv/bin/python -m tests.differential.record --kafka-version 3.9.1 --config node.id=1   # starts 3.9.1
"""

from __future__ import annotations

from pathlib import Path

from tests.reference.launcher import RELEASE_VERSIONS

from .scenario import SCENARIOS, Scenario, all_scenarios


def scenario_releases(root: Path = SCENARIOS) -> list[str]:
    """The release profiles that have a scenarios folder."""
    return sorted(path.name for path in root.iterdir() if path.is_dir() and path.name in RELEASE_VERSIONS)


def release_scenarios(release: str, root: Path = SCENARIOS) -> list[Scenario]:
    """The scenarios of release profile `release` (none when it has no folder)."""
    return [Scenario.load(path) for path in sorted((root / release).glob("*.json"))]


def release_of(kafka_version: str, root: Path = SCENARIOS) -> str | None:
    """The release profile whose scenarios are recorded from Kafka `kafka_version`, None for the reference's."""
    return next((name for name in scenario_releases(root) if RELEASE_VERSIONS[name] == kafka_version), None)


def scenarios_for(kafka_version: str, root: Path = SCENARIOS) -> list[Scenario]:
    """What a Kafka of `kafka_version` is recorded answering: its release's scenarios when it has a folder, the
    top-level ones otherwise."""
    release = release_of(kafka_version, root)
    return release_scenarios(release, root) if release is not None else all_scenarios()
