"""Goldens: Apache Kafka's normalised answers to each scenario, recorded once per Kafka version.

A golden (tests/differential/goldens/<kafka version>/<scenario>.json) holds, per step of its scenario, the
outcome and the normalised answer Kafka gave (normalise.py), the digest of the scenario's requests it was
recorded from, and its provenance: the Kafka version, metadata.version and the finalized features Kafka
advertised in ApiVersions, the broker configs that were not Kafka's defaults, the configs minibroker must
be started with to compare, and the date. `record.py` writes goldens; `test_replay.py` compares minibroker
with them without a JVM. A scenario whose steps changed since its golden was recorded fails replay until it
is recorded again. goldens/api_versions/ belongs to the release-profile suite, not to this module.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from minibroker.protocol.messages import ApiVersionsRequest, DescribeConfigsRequest, MetadataRequest
from minibroker.testing.wire import WireClient

from .normalise import Normaliser
from .scenario import Answer, Scenario, build, plain

GOLDENS = Path(__file__).resolve().parent / "goldens"
#: A folder of goldens is named after the Kafka release they were recorded from.
_VERSION_DIR = re.compile(r"^\d+\.\d+\.\d+$")
ANSWERED, CLOSED, SENT = "answered", "connection closed", "sent: its answer is a later step's"
#: Broker configs whose values name this run's ports and folders: left out of the provenance.
RUN_DEPENDENT_CONFIGS = frozenset({"listeners", "advertised.listeners", "controller.quorum.voters", "log.dirs"})
DEFAULT_CONFIG_SOURCE = 5
BROKER_RESOURCE = 4
RECORD_HINT = ("record it with `MINIBROKER_KAFKA_REFERENCE=host:port .venv/bin/python -m tests.differential.record "
               "--scenario {name}` (without the variable it starts Apache Kafka {version} itself)")


def scenario_digest(scenario: Scenario) -> str:
    """SHA-256 of what a scenario sends and checks (its vars, steps and connections): a golden is valid for this
    digest only."""
    steps = [asdict(step) for step in scenario.steps]
    for step in steps:
        for key in ("raw", "answer_of"):
            if step[key] is None:
                del step[key]  # the digests of scenarios without them stay what they were
    content: dict[str, Any] = {"vars": scenario.vars, "steps": steps}
    if scenario.connections:  # only then: the digests of scenarios without them stay what they were
        content["connections"] = {name: asdict(spec) for name, spec in scenario.connections.items()}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def recorded_step(answer: Answer, normaliser: Normaliser) -> dict[str, Any]:
    """One step's outcome and normalised answer, as a golden stores it and replay compares it."""
    step = answer.step
    if answer.closed:
        return {"name": step.name, "api": step.api, "version": step.version, "outcome": CLOSED, "answer": None}
    if step.expect == "later":
        return {"name": step.name, "api": step.api, "version": step.version, "outcome": SENT, "answer": None}
    if answer.response is None:  # neither answered nor closed in time (a raw step's read timed out)
        return {"name": step.name, "api": step.api, "version": step.version, "outcome": ANSWERED, "answer": None}
    return {"name": step.name, "api": step.api, "version": step.version, "outcome": ANSWERED,
            "answer": normaliser.answer(step.api, answer.response, answer.sent_at_ms)}


def recorded_steps(answers: list[Answer], names: dict[str, str]) -> list[dict[str, Any]]:
    """A scenario run's answers normalised as one broker's (logical names persist across its steps)."""
    normaliser = Normaliser(names)
    return [recorded_step(answer, normaliser) for answer in answers]


@dataclass
class Golden:
    """Kafka's recorded answers to one scenario."""

    scenario: str
    scenario_digest: str
    provenance: dict[str, Any]
    steps: list[dict[str, Any]]

    @property
    def kafka_version(self) -> str:
        return str(self.provenance["kafka_version"])

    @property
    def minibroker_config(self) -> dict[str, str]:
        """The configs the recording Kafka had on top of the launcher's: minibroker runs with them to compare."""
        return dict(self.provenance.get("config", {}))

    def to_json(self) -> str:
        data = {"scenario": self.scenario, "scenario_digest": self.scenario_digest,
                "provenance": self.provenance, "steps": self.steps}
        return json.dumps(data, indent=1, sort_keys=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Golden:
        data = json.loads(text)
        return cls(data["scenario"], data["scenario_digest"], data["provenance"], data["steps"])


def golden_path(kafka_version: str, scenario: str, root: Path = GOLDENS) -> Path:
    return root / kafka_version / f"{scenario}.json"


def load_golden(kafka_version: str, scenario: str, root: Path = GOLDENS) -> Golden | None:
    path = golden_path(kafka_version, scenario, root)
    return Golden.from_json(path.read_text()) if path.is_file() else None


def recorded_versions(root: Path = GOLDENS) -> list[str]:
    """The Kafka versions goldens were recorded from (folders named like 4.3.1; others, e.g. api_versions/, are
    not this module's)."""
    if not root.is_dir():
        return []
    return sorted(path.name for path in root.iterdir() if path.is_dir() and _VERSION_DIR.match(path.name))


def stale_reason(golden: Golden | None, scenario: Scenario, kafka_version: str) -> str | None:
    """Why `golden` cannot be replayed for `scenario` (missing, or recorded from other steps); None if it can."""
    hint = RECORD_HINT.format(name=scenario.name, version=kafka_version)
    if golden is None:
        return f"scenario {scenario.name} has no golden for Apache Kafka {kafka_version}: {hint}"
    if golden.scenario_digest != scenario_digest(scenario):
        return (f"scenario {scenario.name} changed since its golden for Apache Kafka {kafka_version} was recorded "
                f"({golden.provenance.get('recorded')}): {hint}")
    if [step["name"] for step in golden.steps] != [step.name for step in scenario.steps]:
        return f"golden of {scenario.name} does not hold one answer per step: {hint}"
    return None


def provenance(host: str, port: int, kafka_version: str, config: dict[str, str], recorded: str) -> dict[str, Any]:
    """What the Kafka at host:port was when it answered: its features from ApiVersions, its non-default broker
    configs from DescribeConfigs, and the date `recorded`."""
    with WireClient(host, port, client_id="differential-provenance") as wire:
        versions = plain(wire.request(ApiVersionsRequest(client_software_name="minibroker-differential",
                                                         client_software_version="1.0"), 4), 4)
        metadata = wire.request(build(MetadataRequest, {"topics": [], "allow_auto_topic_creation": False,
                                                         "include_topic_authorized_operations": False}), 12)
        node_id = str(metadata.brokers[0].node_id)
        described = plain(wire.request(build(DescribeConfigsRequest, {
            "resources": [{"resource_type": BROKER_RESOURCE, "resource_name": node_id, "configuration_keys": None}],
            "include_synonyms": False, "include_documentation": False}), 4), 4)
    features = {item["name"]: item["max_version_level"] for item in versions["finalized_features"]}
    broker_configs = {item["name"]: item["value"] for item in described["results"][0]["configs"]
                      if item["config_source"] != DEFAULT_CONFIG_SOURCE and item["name"] not in RUN_DEPENDENT_CONFIGS}
    return {
        "kafka_version": kafka_version,
        "metadata_version": features.get("metadata.version"),
        "finalized_features": dict(sorted(features.items())),
        "broker_configs": dict(sorted(broker_configs.items())),
        "config": dict(sorted(config.items())),
        "recorded": recorded,
    }
