"""Record Apache Kafka's answers to the differential scenarios as goldens (golden.py), for replay without a JVM.

    MINIBROKER_KAFKA_REFERENCE=127.0.0.1:36881 .venv/bin/python -m tests.differential.record [--scenario NAME ...]
    .venv/bin/python -m tests.differential.record            # starts Apache Kafka 4.3.1 itself, stops it at the end

Each scenario runs against Kafka (which must follow it: expected closes, `until`s reached), its answers are
normalised as the live comparison normalises them and written to tests/differential/goldens/<kafka
version>/<scenario>.json with the scenario's digest and the provenance. A new or changed scenario needs this
once; review the golden's diff like code, then commit it with the scenario. `--out DIR` writes elsewhere
(e.g. twice to two folders and `diff -r` them, to see that normalisation leaves nothing run-dependent).
Without MINIBROKER_KAFKA_REFERENCE the Kafka started has tests/reference/fixtures.py's REFERENCE_CONFIG, the
configs the live suite uses; against a running one, `--kafka-version` and `--config` say what it runs.
A `--kafka-version` a release profile's scenarios are recorded from (release_scenarios.py: 3.9.1 for
scenarios/3.9/) records those scenarios; any other records the top-level ones.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from tests.reference.fixtures import ADDRESS_ENV, REFERENCE_CONFIG
from tests.reference.launcher import DEFAULT_VERSION, ReferenceKafka

from .golden import GOLDENS, Golden, golden_path, provenance, recorded_steps, scenario_digest
from .release_scenarios import scenarios_for
from .scenario import Scenario, check_followed, run


def record(scenario: Scenario, host: str, port: int, meta: dict[str, object]) -> Golden:
    """Run `scenario` against the Kafka at host:port; its normalised answers as a golden."""
    names = scenario.make_vars()
    answers = run(scenario, host, port, names)
    check_followed(scenario, answers)
    return Golden(scenario.name, scenario_digest(scenario), dict(meta), recorded_steps(answers, names))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", default=[], metavar="NAME",
                        help="record only this scenario (repeatable); default: every scenario")
    parser.add_argument("--kafka-version", default=DEFAULT_VERSION,
                        help=f"the Kafka to start, or the one at ${ADDRESS_ENV} (default {DEFAULT_VERSION})")
    parser.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                        help="a broker config the Kafka runs with on top of the launcher's (minibroker replays "
                             "with it too); default: REFERENCE_CONFIG")
    parser.add_argument("--out", type=Path, default=GOLDENS, help=f"goldens folder (default {GOLDENS})")
    args = parser.parse_args(argv)
    scenarios = scenarios_for(args.kafka_version)
    if args.scenario:
        known = {scenario.name for scenario in scenarios}
        unknown = sorted(set(args.scenario) - known)
        if unknown:
            parser.error(f"no such scenario: {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        scenarios = [scenario for scenario in scenarios if scenario.name in args.scenario]
    config = dict(item.split("=", 1) for item in args.config) if args.config else dict(REFERENCE_CONFIG)
    address = os.environ.get(ADDRESS_ENV)
    kafka = None
    if address:
        host, _, port_text = address.rpartition(":")
        port = int(port_text)
    else:
        print(f"starting Apache Kafka {args.kafka_version} (about a minute)", flush=True)
        kafka = ReferenceKafka.start(args.kafka_version, config=config)
        host, port = kafka.host, kafka.port
    try:
        meta = provenance(host, port, args.kafka_version, config, datetime.now(UTC).date().isoformat())
        for scenario in scenarios:
            golden = record(scenario, host, port, meta)
            path = golden_path(args.kafka_version, scenario.name, args.out)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(golden.to_json())
            print(f"{path}: {len(golden.steps)} steps", flush=True)
    finally:
        if kafka is not None:
            kafka.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
