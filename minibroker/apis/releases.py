"""Protocol profiles: the API version ranges and feature flags an Apache Kafka release advertised.

A node speaking as an older release advertises, and accepts, only the
versions that release had, intersected with what minibroker implements; an
API the release did not have is neither advertised nor served. No released
Kafka has KIP-1269, so such a node keeps Kafka's fixed 5 batches per producer
and never answers Produce v14. `latest` is the release the differential suite
runs (Kafka 4.3) with KIP-1269's Produce v14.

Sources: for 3.9 to 4.4, the ApiVersions v3/v4 answers of the newest patch
release of each (3.9.1, 4.0.2, 4.1.2, 4.2.2, 4.3.1, 4.4.0), one KRaft node
formatted with Kafka's defaults (from 4.0 `transaction.version=2`),
recorded on the wire in tests/differential/goldens/api_versions/ (`python -m
tests.differential.release_goldens`, checked by test_release_profiles.py);
for 2.8 the answer of 2.8.2 as a ZooKeeper-mode broker (its KRaft mode was an
early-access preview), no features and epoch 0; the controller-to-broker APIs
such a broker advertised (LeaderAndIsr, StopReplica, UpdateMetadata,
ControlledShutdown, AlterIsr) are left out: minibroker's nodes have no
ZooKeeper controller. Kafka 4 advertises Produce from v0 although it
refuses v0-2 (KAFKA-18659), as `produce.ADVERTISED_MIN_VERSION` does.
"""

from __future__ import annotations

from dataclasses import dataclass

LATEST = "latest"

# Ranges every listed release shares, for APIs whose versions did not move between 2.8 and 4.4.
_STABLE = {
    12: (0, 4),    # Heartbeat
    14: (0, 5),    # SyncGroup
    17: (0, 1),    # SaslHandshake (advertised on every listener, SASL or not)
    21: (0, 2),    # DeleteRecords
    33: (0, 2),    # AlterConfigs
    36: (0, 2),    # SaslAuthenticate
    37: (0, 3),    # CreatePartitions
    42: (0, 2),    # DeleteGroups (v3 came with 4.4)
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
    26: (0, 3), 28: (0, 3), 29: (0, 2), 30: (0, 2), 31: (0, 2), 32: (0, 4), 34: (0, 2), 35: (0, 2), 45: (0, 0),
    27: (0, 1), 38: (0, 2), 39: (0, 2), 40: (0, 2), 41: (0, 2), 48: (0, 1), 49: (0, 1), 57: (0, 0), 60: (0, 0),
}

# Kafka 3.9 as 3.9.1 answered on one KRaft node: every version from 0, and KIP-848's ConsumerGroupHeartbeat and
# ConsumerGroupDescribe at v0 (an early-access preview, advertised though its group protocol is off). A ZooKeeper
# broker of 3.9 also advertised the inter-broker APIs (LeaderAndIsr, ...); a KRaft one does not.
_KAFKA_3_9 = {
    **_STABLE,
    0: (0, 11), 1: (0, 17), 2: (0, 9), 3: (0, 12), 8: (0, 9), 9: (0, 9), 10: (0, 6), 11: (0, 9), 13: (0, 5),
    15: (0, 5), 16: (0, 5), 18: (0, 4), 19: (0, 7), 20: (0, 6), 22: (0, 5), 23: (0, 4), 24: (0, 5), 25: (0, 4),
    26: (0, 4), 27: (0, 1), 28: (0, 4), 29: (0, 3), 30: (0, 3), 31: (0, 3), 32: (0, 4), 34: (0, 2), 35: (0, 4),
    38: (0, 3), 39: (0, 2), 40: (0, 2), 41: (0, 3), 45: (0, 0), 48: (0, 1), 49: (0, 1), 55: (0, 2), 57: (0, 1),
    60: (0, 1), 64: (0, 0), 65: (0, 0), 66: (0, 1), 68: (0, 0), 69: (0, 0), 74: (0, 0), 75: (0, 0), 80: (0, 0),
    81: (0, 0),
}

# Kafka 4.0 as 4.0.2 answered: it removed the oldest versions of many APIs (KIP-896), and KIP-848 consumer groups
# are on by default (3.9 had them as an early-access preview, off). Keys minibroker does not serve stay listed, so
# the table is the release's; served_range leaves them out.
_KAFKA_4_0 = {
    **_STABLE,
    0: (0, 12), 1: (4, 17), 2: (1, 10), 3: (0, 13), 8: (2, 9), 9: (1, 9), 10: (0, 6), 11: (0, 9), 13: (0, 5),
    15: (0, 6), 16: (0, 5), 18: (0, 4), 19: (2, 7), 20: (1, 6), 22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4),
    26: (0, 5), 27: (1, 1), 28: (0, 5), 29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 34: (1, 2), 35: (1, 4),
    38: (1, 3), 39: (1, 2), 40: (1, 2), 41: (1, 3), 45: (0, 0), 48: (0, 1), 49: (0, 1), 55: (0, 2), 57: (0, 2),
    60: (0, 2), 64: (0, 0), 65: (0, 0), 66: (0, 1), 68: (0, 1), 69: (0, 1), 74: (0, 0), 75: (0, 0), 80: (0, 0),
    81: (0, 0),
}

# 4.1 (4.1.2): share groups' APIs (KIP-932) are advertised, though share.version is not finalized by default.
_KAFKA_4_1 = {
    **_KAFKA_4_0,
    0: (0, 13), 1: (4, 18), 45: (0, 1), 66: (0, 2), 74: (0, 1),
    76: (1, 1), 77: (1, 1), 78: (1, 1), 79: (1, 1), 83: (0, 0), 84: (0, 0), 85: (0, 0), 86: (0, 0), 87: (0, 0),
    90: (0, 0), 91: (0, 0), 92: (0, 0),
}

# 4.2 (4.2.2): Kafka Streams groups' APIs (KIP-1071)
_KAFKA_4_2 = {
    **_KAFKA_4_1,
    2: (1, 11), 8: (2, 10), 9: (1, 10), 27: (1, 2), 78: (1, 2), 79: (1, 2), 80: (0, 1), 85: (0, 1), 87: (0, 1),
    88: (0, 0), 89: (0, 0), 90: (0, 1),
}

# 4.3 (4.3.1): DescribeLogDirs v5 (IsCordoned)
_KAFKA_4_3 = {**_KAFKA_4_2, 35: (1, 5)}

# 4.4 (4.4.0): ApiVersions v5 (KIP-1242), TxnOffsetCommit v6 (KIP-1319), DeleteGroups v3 (an error message per
# group), Streams groups' APIs v1, StreamsGroupTopologyDescriptionUpdate (93) and UnregisterController (94)
_KAFKA_4_4 = {**_KAFKA_4_3, 18: (0, 5), 28: (0, 6), 42: (0, 3), 88: (0, 1), 89: (0, 1), 93: (0, 0), 94: (0, 0)}


@dataclass(frozen=True)
class Features:
    """The feature flags of ApiVersions v3+ (KIP-584): what a node's software supports and what its release
    finalizes on a cluster formatted with Kafka's defaults (from 4.0 transaction.version 2, transactions V2). In
    name order: Kafka lists them from a hash map."""

    supported: tuple[tuple[str, int, int], ...] = ()  # (name, min, max)
    finalized: tuple[tuple[str, int], ...] = ()  # (name, level); a feature at level 0 is not listed
    # feature versioning is on with nothing finalized: a ZooKeeper cluster of 2.7+ (its /feature znode, version 0)
    # answers FinalizedFeaturesEpoch 0 where a cluster without it answers -1
    versioned: bool = False


# 3.9 knows kraft.version and metadata.version only (3.9-IV0, level 21, finalized by a default format)
_FEATURES_3_9 = Features(
    supported=(("kraft.version", 0, 1), ("metadata.version", 1, 21)),
    finalized=(("metadata.version", 21),),
)
_FEATURES_4_0 = Features(
    supported=(("eligible.leader.replicas.version", 0, 1), ("group.version", 0, 1), ("kraft.version", 0, 1),
               ("metadata.version", 7, 25), ("transaction.version", 0, 2)),
    finalized=(("group.version", 1), ("metadata.version", 25), ("transaction.version", 2)),
)
_FEATURES_4_1 = Features(
    supported=(("eligible.leader.replicas.version", 0, 1), ("group.version", 0, 1), ("kraft.version", 0, 1),
               ("metadata.version", 7, 27), ("share.version", 0, 1), ("transaction.version", 0, 2)),
    finalized=(("eligible.leader.replicas.version", 1), ("group.version", 1), ("metadata.version", 27),
               ("transaction.version", 2)),
)
_FEATURES_4_2 = Features(
    supported=(("eligible.leader.replicas.version", 0, 1), ("group.version", 0, 1), ("kraft.version", 0, 1),
               ("metadata.version", 7, 29), ("share.version", 0, 1), ("streams.version", 0, 1),
               ("transaction.version", 0, 2)),
    finalized=(("eligible.leader.replicas.version", 1), ("group.version", 1), ("metadata.version", 29),
               ("share.version", 1), ("streams.version", 1), ("transaction.version", 2)),
)
_FEATURES_4_3 = Features(
    supported=(("eligible.leader.replicas.version", 0, 1), ("group.version", 0, 1), ("kraft.version", 0, 1),
               ("metadata.version", 7, 30), ("share.version", 0, 1), ("streams.version", 0, 1),
               ("transaction.version", 0, 2)),
    finalized=(("eligible.leader.replicas.version", 1), ("group.version", 1), ("metadata.version", 30),
               ("share.version", 1), ("streams.version", 1), ("transaction.version", 2)),
)
_FEATURES_4_4 = Features(
    supported=(("eligible.leader.replicas.version", 0, 1), ("group.version", 0, 1), ("kraft.version", 0, 1),
               ("metadata.version", 7, 33), ("share.version", 0, 2), ("streams.version", 0, 1),
               ("transaction.version", 0, 2)),
    finalized=(("eligible.leader.replicas.version", 1), ("group.version", 1), ("metadata.version", 33),
               ("share.version", 2), ("streams.version", 1), ("transaction.version", 2)),
)


@dataclass(frozen=True)
class Release:
    """A protocol profile: per API key the (min, max) the release advertised, and its feature flags."""

    name: str
    api_ranges: dict[int, tuple[int, int]]
    kip1269: bool  # retains `producer.state.batches.to.retain` batches and answers Produce v14
    kip896: bool = True  # dropped the old API versions (Kafka 4.0); earlier releases serve PRE_KIP896_MIN_VERSION
    # a group's ACL operations include DESCRIBE_CONFIGS and ALTER_CONFIGS (Kafka 4.0's AclEntry); before, a group's
    # authorized operations were READ, DESCRIBE and DELETE
    group_config_operations: bool = True
    features: Features = Features()


RELEASES: dict[str, Release] = {
    "2.8": Release("2.8", _KAFKA_2_8, kip1269=False, kip896=False, group_config_operations=False,
                   features=Features(versioned=True)),
    "3.9": Release("3.9", _KAFKA_3_9, kip1269=False, kip896=False, group_config_operations=False,
                   features=_FEATURES_3_9),
    "4.0": Release("4.0", _KAFKA_4_0, kip1269=False, features=_FEATURES_4_0),
    "4.1": Release("4.1", _KAFKA_4_1, kip1269=False, features=_FEATURES_4_1),
    "4.2": Release("4.2", _KAFKA_4_2, kip1269=False, features=_FEATURES_4_2),
    "4.3": Release("4.3", _KAFKA_4_3, kip1269=False, features=_FEATURES_4_3),
    "4.4": Release("4.4", _KAFKA_4_4, kip1269=False, features=_FEATURES_4_4),
    # the reference release with KIP-1269: Produce v14 answers ProducerStateBatchesToRetain
    LATEST: Release(LATEST, {**_KAFKA_4_3, 0: (0, 14)}, kip1269=True, features=_FEATURES_4_3),
}


def release(name: str) -> Release:
    """The profile called `name`; ValueError lists the known ones."""
    found = RELEASES.get(name)
    if found is None:
        raise ValueError(f"unknown Kafka release {name!r}: choose one of {', '.join(RELEASES)}")
    return found


def served_range(release_name: str, api_key: int, implemented: tuple[int, int]) -> tuple[int, int] | None:
    """The versions of `api_key` a node of this release advertises: the release's range within ours."""
    theirs = RELEASES[release_name].api_ranges.get(api_key)
    if theirs is None:
        return None
    low, high = max(theirs[0], implemented[0]), min(theirs[1], implemented[1])
    return (low, high) if low <= high else None
