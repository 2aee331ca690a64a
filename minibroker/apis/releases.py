"""Protocol profiles: the API version ranges an Apache Kafka release advertised.

A node speaking as an older release advertises, and accepts, only the
versions that release had, intersected with what minibroker implements; an
API the release did not have is neither advertised nor served. No released
Kafka has KIP-1269, so such a node keeps Kafka's fixed 5 batches per producer
and never answers Produce v14.

Sources: for 3.9, 4.0, 4.1 and 4.2 the `validVersions` of each request
(unstable versions removed) at the release tags, from the project's reference
notes (../shared/reference/broker-semantics.md §1.2); for 2.8, and for the
reassignment, election, OffsetDelete, ACL and DescribeLogDirs APIs at every
release, the ApiVersions ranges recorded from real brokers in kafka-python's
`kafka/protocol/broker_version_data.py` (DescribeLogDirs v5, IsCordoned, came
with 4.3, so only `latest` serves it).
Kafka 4 advertises Produce from v0 although it refuses v0-2 (KAFKA-18659),
as `produce.ADVERTISED_MIN_VERSION` does.
"""

from __future__ import annotations

from dataclasses import dataclass

LATEST = "latest"

# Ranges every listed release shares, for APIs whose versions did not move between 2.8 and 4.2.
_STABLE = {
    12: (0, 4),    # Heartbeat
    14: (0, 5),    # SyncGroup
    17: (0, 1),    # SaslHandshake (advertised on every listener, SASL or not)
    21: (0, 2),    # DeleteRecords
    33: (0, 2),    # AlterConfigs
    36: (0, 2),    # SaslAuthenticate
    37: (0, 3),    # CreatePartitions
    42: (0, 2),    # DeleteGroups (v3 is trunk only)
    43: (0, 2),    # ElectLeaders
    44: (0, 1),    # IncrementalAlterConfigs
    46: (0, 0),    # ListPartitionReassignments
    47: (0, 0),    # OffsetDelete
    50: (0, 0),    # DescribeUserScramCredentials (KIP-554, 2.7)
    51: (0, 0),    # AlterUserScramCredentials
    61: (0, 0),    # DescribeProducers
}

_KAFKA_2_8 = {
    **_STABLE,
    0: (0, 9), 1: (0, 12), 2: (0, 6), 3: (0, 11), 8: (0, 8), 9: (0, 7), 10: (0, 3), 11: (0, 7), 13: (0, 4),
    15: (0, 5), 16: (0, 4), 18: (0, 3), 19: (0, 7), 20: (0, 6), 22: (0, 4), 23: (0, 4), 24: (0, 3), 25: (0, 3),
    26: (0, 3), 28: (0, 3), 29: (0, 2), 30: (0, 2), 31: (0, 2), 32: (0, 4), 35: (0, 2), 45: (0, 0),
    60: (0, 0),
}

_KAFKA_3_9 = {
    **_STABLE,
    0: (0, 11), 1: (0, 17), 2: (0, 9), 3: (0, 12), 8: (0, 9), 9: (0, 9), 10: (0, 6), 11: (0, 9), 13: (0, 5),
    15: (0, 5), 16: (0, 5), 18: (0, 4), 19: (0, 7), 20: (0, 6), 22: (0, 5), 23: (0, 4), 24: (0, 5), 25: (0, 4),
    26: (0, 4), 28: (0, 4), 29: (0, 3), 30: (0, 3), 31: (0, 3), 32: (0, 4), 35: (0, 4), 45: (0, 0),
    60: (0, 1), 65: (0, 0), 66: (0, 1), 75: (0, 0),
}

# Kafka 4.0 removed the oldest versions of many APIs (KIP-896).
_KAFKA_4_0 = {
    **_KAFKA_3_9,
    0: (0, 12), 1: (4, 17), 2: (1, 10), 3: (0, 13), 8: (2, 9), 9: (1, 9), 15: (0, 6), 19: (2, 7), 20: (1, 6),
    23: (2, 4), 26: (0, 5), 28: (0, 5), 29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 35: (1, 4),
    60: (0, 2),
    # KIP-848 consumer groups, on by default from 4.0 (3.9 had them as an early-access preview, off)
    68: (0, 1), 69: (0, 1),
}

_KAFKA_4_1 = {**_KAFKA_4_0, 0: (0, 13), 1: (4, 18), 45: (0, 1), 66: (0, 2)}

_KAFKA_4_2 = {**_KAFKA_4_1, 2: (1, 11), 8: (2, 10), 9: (1, 10)}


@dataclass(frozen=True)
class Release:
    """A protocol profile: per API key the (min, max) the release advertised; None means all we implement."""

    name: str
    api_ranges: dict[int, tuple[int, int]] | None
    kip1269: bool  # retains `producer.state.batches.to.retain` batches and answers Produce v14
    kip896: bool = True  # dropped the old API versions (Kafka 4.0); earlier releases serve PRE_KIP896_MIN_VERSION


RELEASES: dict[str, Release] = {
    "2.8": Release("2.8", _KAFKA_2_8, kip1269=False, kip896=False),
    "3.9": Release("3.9", _KAFKA_3_9, kip1269=False, kip896=False),
    "4.0": Release("4.0", _KAFKA_4_0, kip1269=False),
    "4.1": Release("4.1", _KAFKA_4_1, kip1269=False),
    "4.2": Release("4.2", _KAFKA_4_2, kip1269=False),
    LATEST: Release(LATEST, None, kip1269=True),
}


def release(name: str) -> Release:
    """The profile called `name`; ValueError lists the known ones."""
    found = RELEASES.get(name)
    if found is None:
        raise ValueError(f"unknown Kafka release {name!r}: choose one of {', '.join(RELEASES)}")
    return found


def served_range(release_name: str, api_key: int, implemented: tuple[int, int]) -> tuple[int, int] | None:
    """The versions of `api_key` a node of this release advertises: the release's range within ours."""
    ranges = RELEASES[release_name].api_ranges
    if ranges is None:
        return implemented
    theirs = ranges.get(api_key)
    if theirs is None:
        return None
    low, high = max(theirs[0], implemented[0]), min(theirs[1], implemented[1])
    return (low, high) if low <= high else None
