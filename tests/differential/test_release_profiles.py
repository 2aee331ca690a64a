"""Each release profile (minibroker/apis/releases.py) answers ApiVersions as the Kafka release it names.

The goldens (goldens/api_versions/<release>.json, written by `python -m tests.differential.release_goldens`)
hold the normalised ApiVersions v3 and v4 answers of a real Kafka of each release; a minibroker node started
`--as-version <release>` must give the same answer field by field: API keys and version ranges, supported
features and finalized levels. No JVM is needed, except for the live check that the reference Kafka still
answers as its golden says. Two kinds of difference are not defects of a profile:

- an API minibroker does not serve at all, which the differential ledger (ledger.json, scenario
  api_versions) lists with the README's "What minibroker does not do" as its reason;
- a difference PROFILE_GAPS lists for one profile with its reason, judged as the ledger judges scenarios: an
  entry that no longer differs fails.

KIP-1269's Produce v14 is only the `latest` profile's, which has no golden of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from minibroker.apis.releases import LATEST, RELEASES
from minibroker.testing.embedded import BrokerThread

from . import release_goldens
from .compare import ABSENT, Difference, LedgerEntry, differences, judge, load_ledger

GOLDEN_RELEASES = release_goldens.recorded()

_DOES_NOT_DO = "README 'What minibroker does not do'"
_ZK_BROKER_APIS = ("Kafka 2.8.2 ran as a ZooKeeper-mode broker, which advertised the APIs its ZooKeeper "
                   "controller sends brokers (LeaderAndIsr 4, StopReplica 5, UpdateMetadata 6, ControlledShutdown 7, "
                   "AlterIsr 56); clients never send them, and minibroker's nodes have no such controller "
                   f"({_DOES_NOT_DO}: the KRaft controller and broker-to-broker APIs)")
#: What a profile intentionally lacks of its release beyond the ledgered API keys, each with its reason.
PROFILE_GAPS = [
    LedgerEntry("release_profile:2.8", "v3", "api_keys[api_key=4]", _ZK_BROKER_APIS),
    LedgerEntry("release_profile:2.8", "v3", "api_keys[api_key=5]", _ZK_BROKER_APIS),
    LedgerEntry("release_profile:2.8", "v3", "api_keys[api_key=6]", _ZK_BROKER_APIS),
    LedgerEntry("release_profile:2.8", "v3", "api_keys[api_key=7]", _ZK_BROKER_APIS),
    LedgerEntry("release_profile:2.8", "v3", "api_keys[api_key=56]", _ZK_BROKER_APIS),
    LedgerEntry("release_profile:4.4", "*", "api_keys[api_key=18].max_version",
                "ApiVersions v5 (KIP-1242: the client names the cluster and node it expects, REBOOTSTRAP_REQUIRED "
                f"otherwise), new in Kafka 4.4, is not served ({_DOES_NOT_DO}: what Kafka 4.4 added)"),
    LedgerEntry("release_profile:4.4", "*", "api_keys[api_key=28].max_version",
                "TxnOffsetCommit v6 (KIP-1319: topics by id), new in Kafka 4.4, is not served "
                f"({_DOES_NOT_DO}: what Kafka 4.4 added); v5 (transactions V2) is"),
    *(LedgerEntry("release_profile:4.4", "*", f"api_keys[api_key={key}].max_version",
                  f"{name} v1 (KIP-1331: the topology description plugin), new in Kafka 4.4, is not served "
                  f"({_DOES_NOT_DO}: what Kafka 4.4 added); v0 is")
      for key, name in ((88, "StreamsGroupHeartbeat"), (89, "StreamsGroupDescribe"))),
    LedgerEntry("release_profile:4.4", "*", "api_keys[api_key=93]",
                "StreamsGroupTopologyDescriptionUpdate belongs to Kafka Streams groups (KIP-1071), which minibroker "
                f"does not do ({_DOES_NOT_DO})"),
    LedgerEntry("release_profile:4.4", "*", "api_keys[api_key=94]",
                f"UnregisterController is a KRaft controller API ({_DOES_NOT_DO}: the KRaft controller and "
                "broker-to-broker APIs)"),
]


@pytest.fixture(scope="module")
def profile_broker() -> Iterator[Callable[[str], BrokerThread]]:
    """A single-node minibroker per release, started on first use, stopped at the end of the module."""
    started: dict[str, BrokerThread] = {}

    def get(name: str) -> BrokerThread:
        if name not in started:
            started[name] = BrokerThread(as_version=name).start()
        return started[name]

    yield get
    for broker in started.values():
        broker.stop()


def _golden(release: str) -> dict[str, Any]:
    golden = release_goldens.load(release)
    assert golden is not None, f"no golden for {release}: python -m tests.differential.release_goldens {release}"
    return golden


def _not_served_keys() -> set[int]:
    """The API keys the ledger says minibroker does not serve at all (an entry for the whole key)."""
    keys = set()
    for entry in load_ledger():
        if entry.scenario == "api_versions" and entry.path.startswith("api_keys[api_key=") \
                and entry.path.endswith("]") and "." not in entry.path:
            keys.add(int(entry.path.removeprefix("api_keys[api_key=").removesuffix("]")))
    return keys


def _profile_differences(broker: BrokerThread, golden: dict[str, Any], version: str) -> list[Difference]:
    ours = release_goldens.api_versions_answers(broker.host, broker.port)[version]
    return differences(ours, golden["answers"][version])


def _key_of(difference: Difference) -> int | None:
    if not difference.path.startswith("api_keys[api_key="):
        return None
    return int(difference.path.removeprefix("api_keys[api_key=").split("]", 1)[0])


@pytest.mark.parametrize("version", [str(v) for v in release_goldens.VERSIONS], ids=lambda v: f"v{v}")
@pytest.mark.parametrize("release", GOLDEN_RELEASES)
def test_profile_answers_api_versions_as_its_release(release: str, version: str,
                                                     profile_broker: Callable[[str], BrokerThread]) -> None:
    golden = _golden(release)
    not_served = _not_served_keys()
    found = [difference for difference in _profile_differences(profile_broker(release), golden, version)
             if not (difference.path == f"api_keys[api_key={_key_of(difference)}]"
                      and _key_of(difference) in not_served and difference.minibroker == ABSENT)]
    gaps = [gap for gap in PROFILE_GAPS if gap.step in ("*", f"v{version}")]  # 2.8 answers v4 UNSUPPORTED_VERSION
    verdict = judge(f"release_profile:{release}", {f"v{version}": found}, gaps)
    assert verdict.ok, (f"minibroker --as-version {release} differs from Apache Kafka "
                        f"{golden['provenance']['kafka_version']} (ApiVersions v{version}):\n{verdict.report()}")


def test_every_ledgered_missing_api_is_advertised_by_the_reference_release() -> None:
    """The ledger's "not served" keys are keys Kafka 4.3 advertises and minibroker does not: none is stale."""
    advertised = {entry["api_key"] for entry in _golden("4.3")["answers"]["4"]["api_keys"]}
    served = {key for key, _, _ in _latest_ranges()}
    not_served = _not_served_keys()
    assert not_served <= advertised - served, sorted(not_served - (advertised - served))
    assert advertised - served <= not_served, sorted(advertised - served - not_served)


def _latest_ranges() -> list[tuple[int, int, int]]:
    from minibroker.apis import advertised_ranges

    return advertised_ranges(LATEST)


def test_every_golden_names_a_profile_and_every_recorded_release_has_a_golden() -> None:
    assert set(GOLDEN_RELEASES) <= set(RELEASES), sorted(set(GOLDEN_RELEASES) - set(RELEASES))
    assert set(GOLDEN_RELEASES) == set(release_goldens.KAFKA_RELEASES)
    for release in GOLDEN_RELEASES:
        provenance = _golden(release)["provenance"]
        assert provenance["kafka_version"] == release_goldens.KAFKA_RELEASES[release]
        assert provenance["kafka_version"].startswith(release + ".")


@pytest.mark.reference
@pytest.mark.timeout(600)
def test_reference_kafka_still_answers_as_its_golden(kafka_reference: Any) -> None:
    release = next((name for name, version in release_goldens.KAFKA_RELEASES.items()
                    if version == kafka_reference.version), None)
    if release is None:
        pytest.skip(f"no release golden is recorded from Kafka {kafka_reference.version}")
    golden = _golden(release)
    live = release_goldens.api_versions_answers(kafka_reference.host, kafka_reference.port)
    found = {version: differences(live[version], golden["answers"][version]) for version in golden["answers"]}
    assert not any(found.values()), (
        f"Apache Kafka {kafka_reference.version} no longer answers as goldens/api_versions/{release}.json: "
        f"re-record it (python -m tests.differential.release_goldens {release}) and review the diff:\n"
        + "\n".join(f"v{version}: {difference}" for version, diffs in found.items() for difference in diffs))
