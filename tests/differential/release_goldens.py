"""Goldens of the release profiles: the ApiVersions answers of real Apache Kafka releases, one file per release.

    .venv/bin/python -m tests.differential.release_goldens [RELEASE ...]     # default: every release below
    MINIBROKER_KAFKA_REFERENCE=127.0.0.1:36881 .venv/bin/python -m tests.differential.release_goldens 4.3

Each release's Kafka (installed with `scripts/install-reference-kafka.sh <version>`, e.g. 4.0.2) is started
as the reference launcher starts it (one KRaft node, Kafka's defaults, from 4.0 transaction.version 2, with
tests/reference/launcher.py's default_features at format time), asked
ApiVersions v3 and v4, and stopped;
the answers, normalised as the differential suite normalises them (normalise.py: throttle time, the
finalized features epoch, features in name order), go to goldens/api_versions/<release>.json with their
provenance (golden.py's: Kafka version, metadata.version, finalized features, non-default configs, date).
2.8 (ZOOKEEPER_RELEASES) is recorded from a ZooKeeper-mode broker started by hand, as ZOOKEEPER_HOWTO says:
the launcher runs KRaft nodes, and 2.8's KRaft mode was an early-access preview that answered otherwise.
With MINIBROKER_KAFKA_REFERENCE the Kafka running there is recorded instead (one release, named on the
command line; `--kafka-version` says which version runs there, 4.3.1 by default). Review the diff of a
re-recorded golden like code. test_release_profiles.py compares minibroker's profiles with these files.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from minibroker.protocol.messages import ApiVersionsRequest
from minibroker.testing.wire import WireClient
from tests.reference.fixtures import ADDRESS_ENV
from tests.reference.launcher import (
    DEFAULT_VERSION,
    READY_TIMEOUT_S,
    RELEASE_VERSIONS,
    ReferenceKafka,
    default_features,
)

from .golden import provenance
from .normalise import Normaliser
from .scenario import plain

GOLDENS = Path(__file__).resolve().parent / "goldens" / "api_versions"
#: The release profiles with a golden, and the Kafka release (the newest patch) each is recorded from.
KAFKA_RELEASES: dict[str, str] = dict(RELEASE_VERSIONS)
#: Releases whose golden is of a ZooKeeper-mode broker (their KRaft mode was early access or absent).
ZOOKEEPER_RELEASES = frozenset({"2.8"})
ZOOKEEPER_HOWTO = ("java -cp '.cache/kafka/2.8.2/*' org.apache.zookeeper.server.ZooKeeperServerMain ZK_PORT DIR, then "
                   "java -cp '.cache/kafka/2.8.2/*' kafka.Kafka server.properties with broker.id=1, "
                   "zookeeper.connect=127.0.0.1:ZK_PORT, listeners=PLAINTEXT://127.0.0.1:PORT, log.dirs, and 1 for "
                   "offsets.topic.replication.factor, transaction.state.log.replication.factor and min.isr; "
                   "stop both by PID after recording")
#: The ApiVersions versions recorded: the ones with features (v3 leaves out features whose range starts at 0).
VERSIONS = (3, 4)
CLIENT_SOFTWARE = {"client_software_name": "minibroker-differential", "client_software_version": "1.0"}
#: Starting a JVM on a loaded 2-core machine: the launcher's 120 s was not always enough.
START_TIMEOUT_S = max(READY_TIMEOUT_S, 600.0)


def api_versions_answers(host: str, port: int) -> dict[str, dict[str, Any]]:
    """The broker's normalised ApiVersions answers, keyed by version ("3", "4")."""
    answers = {}
    with WireClient(host, port, client_id="release-golden") as wire:
        for version in VERSIONS:
            sent_at_ms = int(time.time() * 1000)
            response = wire.request(ApiVersionsRequest(**CLIENT_SOFTWARE), version)
            answers[str(version)] = Normaliser({}).answer("ApiVersions", plain(response, version), sent_at_ms)
    return answers


def golden_path(release: str, root: Path = GOLDENS) -> Path:
    return root / f"{release}.json"


def load(release: str, root: Path = GOLDENS) -> dict[str, Any] | None:
    """The golden of `release` ({"release", "provenance", "answers"}), None when there is none."""
    path = golden_path(release, root)
    return json.loads(path.read_text()) if path.is_file() else None


def recorded(root: Path = GOLDENS) -> list[str]:
    """The releases that have a golden."""
    return sorted(path.stem for path in root.glob("*.json")) if root.is_dir() else []


def record(release: str, host: str, port: int, kafka_version: str) -> dict[str, Any]:
    """The golden of the Kafka at host:port, which runs `kafka_version` of `release`."""
    recorded_on = datetime.now(UTC).date().isoformat()
    if release in ZOOKEEPER_RELEASES:  # provenance() asks Metadata v12; 2.8 answers up to v11
        meta: dict[str, Any] = {"kafka_version": kafka_version, "mode": "zookeeper", "started": ZOOKEEPER_HOWTO,
                                "config": {}, "recorded": recorded_on}
    else:
        meta = provenance(host, port, kafka_version, {}, recorded_on)
        meta["format_features"] = default_features(kafka_version)
    return {"release": release, "provenance": meta, "answers": api_versions_answers(host, port)}


def write(golden: dict[str, Any], root: Path = GOLDENS) -> Path:
    path = golden_path(golden["release"], root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(golden, indent=1) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("releases", nargs="*", metavar="RELEASE",
                        help=f"profiles to record (default: all of {', '.join(KAFKA_RELEASES)})")
    parser.add_argument("--kafka-version", default=DEFAULT_VERSION,
                        help=f"the version running at ${ADDRESS_ENV} (default {DEFAULT_VERSION})")
    parser.add_argument("--out", type=Path, default=GOLDENS, help=f"goldens folder (default {GOLDENS})")
    args = parser.parse_args(argv)
    releases = args.releases or [name for name in KAFKA_RELEASES if name not in ZOOKEEPER_RELEASES]
    unknown = [name for name in releases if name not in KAFKA_RELEASES]
    if unknown:
        parser.error(f"no Kafka release recorded for {', '.join(unknown)} (known: {', '.join(KAFKA_RELEASES)})")
    address = os.environ.get(ADDRESS_ENV)
    if address:
        if len(releases) != 1 or not args.kafka_version.startswith(releases[0] + "."):
            parser.error(f"with ${ADDRESS_ENV}, name the one release running there (and --kafka-version)")
        host, _, port = address.rpartition(":")
        print(f"{write(record(releases[0], host, int(port), args.kafka_version), args.out)}", flush=True)
        return 0
    by_hand = [name for name in releases if name in ZOOKEEPER_RELEASES]
    if by_hand:
        parser.error(f"{', '.join(by_hand)}: start a ZooKeeper-mode broker by hand ({ZOOKEEPER_HOWTO}) and "
                     f"record it with ${ADDRESS_ENV}")
    for name in releases:
        version = KAFKA_RELEASES[name]
        print(f"starting Apache Kafka {version} (about a minute)", flush=True)
        kafka = ReferenceKafka.start(version, timeout=START_TIMEOUT_S)
        try:
            print(f"{write(record(name, kafka.host, kafka.port, version), args.out)}", flush=True)
        finally:
            kafka.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
