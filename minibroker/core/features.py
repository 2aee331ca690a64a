"""The cluster's finalized feature levels (KIP-584) and how UpdateFeatures changes them.

Mirrors Kafka 4.3.1's FeatureControlManager and QuorumFeatures: an update is checked against the range the
controller node's software supports, then every node's, then the upgrade type, then metadata.version's
downgrade rule or the other features' dependencies (Feature.validateVersion). The first refusal fails the
whole request and nothing changes. Updates are checked in the order Kafka's HashMap of them iterates, since
that decides which of several refusals is answered. Every applied change raises the epoch clients see in
ApiVersions, as Kafka's epoch is the metadata offset of the change. Initial levels are chosen as Kafka's
StorageTool (`kafka-storage format --feature`) chooses them. Facts measured on Kafka 4.3.1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"

# FeatureUpdate.UpgradeType on the wire (UpdateFeatures v1+)
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
UPGRADE_TYPES = (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE)

#: Feature.dependencies in 4.3.1: a (feature, level) needs these features at these levels at least.
DEPENDENCIES: Mapping[tuple[str, int], Mapping[str, int]] = {
    ("eligible.leader.replicas.version", 1): {METADATA_VERSION: 23},
}

#: MetadataVersion.didMetadataChange: the levels whose step up from the level below changed the metadata format,
#: so a downgrade across one of them might lose metadata and Kafka refuses it.
METADATA_CHANGED = frozenset({8, 11, 13, 14, 15, 17, 23, 30, 31})

#: MetadataVersion names by feature level (3.3-IV3 is the first KRaft metadata.version with FeatureLevelRecord).
METADATA_VERSION_NAMES: Mapping[int, str] = {
    7: "3.3-IV3", 8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0", 13: "3.6-IV1",
    14: "3.6-IV2", 15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2", 18: "3.7-IV3", 19: "3.7-IV4", 20: "3.8-IV0",
    21: "3.9-IV0", 22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2", 25: "4.0-IV3", 26: "4.1-IV0", 27: "4.1-IV1",
    28: "4.2-IV0", 29: "4.2-IV1", 30: "4.3-IV0", 31: "4.4-IV0", 32: "4.4-IV1", 33: "4.4-IV2",
}

#: Feature.defaultLevel: the metadata.version from which each feature's level is on by default at format time.
_DEFAULT_FROM: Mapping[str, tuple[tuple[int, int], ...]] = {
    "transaction.version": ((24, 2),),
    "group.version": ((22, 1),),
    "eligible.leader.replicas.version": ((26, 1),),
    "share.version": ((28, 1),),
    "streams.version": ((29, 1),),
}

_UPDATE_FAILED = "The update failed for all features since the following feature had an error: "


def default_level(feature: str, metadata_version: int) -> int:
    """The level Kafka's formatter gives `feature` when formatting at `metadata_version` without --feature."""
    level = 0
    for since, at in _DEFAULT_FROM.get(feature, ()):
        if metadata_version >= since:
            level = at
    return level


def hash_map_order(keys: Iterable[str]) -> list[str]:
    """`keys` (first occurrence of each) in the order a java.util.HashMap<String, _> built from them iterates."""
    unique = list(dict.fromkeys(keys))
    capacity = 16
    while len(unique) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str) -> int:
        h = _java_string_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(unique, key=bucket)  # sorted() is stable: a bucket keeps insertion order


def _java_string_hash(key: str) -> int:
    """String.hashCode as an unsigned 32-bit value (cluster.java_string_hash, which imports this module's users)."""
    h = 0
    data = key.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


@dataclass(frozen=True)
class NodeSupport:
    """What one node's software supports: feature -> (min, max)."""

    node_id: int
    ranges: Mapping[str, tuple[int, int]]


class FeatureUpdateError(Exception):
    """INVALID_UPDATE_VERSION (95) with Kafka's whole message."""

    error_code = 95


class FeatureLevels:
    """The finalized level of each feature (metadata.version included) and the epoch of the last change."""

    def __init__(self, levels: Mapping[str, int], controller: NodeSupport, nodes: Sequence[NodeSupport]) -> None:
        self._levels = {name: level for name, level in levels.items() if level > 0}
        self._controller = controller
        self._nodes = sorted(nodes, key=lambda node: node.node_id)
        self.epoch = 0

    def level(self, feature: str) -> int:
        """The finalized level of `feature`; 0 when it is not finalized."""
        return self._levels.get(feature, 0)

    def finalized(self) -> tuple[tuple[str, int], ...]:
        """(name, level) of every finalized feature, by name; level 0 is not finalized and not listed."""
        return tuple(sorted(self._levels.items()))

    def update(self, updates: Sequence[tuple[str, int, int]], validate_only: bool = False) -> None:
        """Apply (feature, level, upgrade type) updates all together, or none: FeatureUpdateError says why."""
        wanted: dict[str, tuple[int, int]] = {}
        for name, level, upgrade_type in updates:  # a feature named twice: the last one counts (Map.put)
            wanted[name] = (level, upgrade_type)
        proposed = {**self._levels, **{name: level for name, (level, _) in wanted.items()}}
        for name in hash_map_order(wanted):
            level, upgrade_type = wanted[name]
            reason = self._refusal(name, level, upgrade_type, proposed)
            if reason is not None:
                raise FeatureUpdateError(_UPDATE_FAILED + reason)
        if validate_only or not wanted:
            return
        for name, (level, _) in wanted.items():
            if level > 0:
                self._levels[name] = level
            else:
                self._levels.pop(name, None)
        self.epoch += 1

    def _refusal(self, name: str, level: int, upgrade_type: int, proposed: Mapping[str, int]) -> str | None:
        """Why FeatureControlManager.updateFeature refuses this one update, or None."""
        invalid = f"Invalid update version {level} for feature {name}. "
        if upgrade_type not in UPGRADE_TYPES:
            return invalid + "The controller does not support the given upgrade type."
        if level < 0:
            return invalid + "A feature version cannot be less than 0."
        reason = _not_supported(f"Local controller {self._controller.node_id}", self._controller, name, level)
        for node in self._nodes:
            reason = reason or _not_supported(f"Broker {node.node_id}", node, name, level)
        if reason is not None:
            return invalid + reason
        current = self.level(name)
        if level < current and upgrade_type == UPGRADE:
            return invalid + ("Can't downgrade the version of this feature without setting the upgrade type to "
                              "either safe or unsafe downgrade.")
        if level > current and upgrade_type != UPGRADE:
            return invalid + "Can't downgrade to a newer version."
        if name == METADATA_VERSION:
            if level < current and any(step in METADATA_CHANGED for step in range(level + 1, current + 1)):
                why = ("Unsafe metadata downgrade is not supported in this version." if upgrade_type == UNSAFE_DOWNGRADE
                       else "Refusing to perform the requested downgrade because it might delete metadata "
                            "information.")
                return f"Unsupported metadata.version downgrade from {current} to {level}. {why}"
            return None
        if name not in self._controller.ranges:
            return invalid + f"Feature {name} not found."
        for needed, at_least in DEPENDENCIES.get((name, level), {}).items():
            if proposed.get(needed, 0) < at_least:
                return invalid + f"{name} could not be set to {level} because it depends on {needed} level {at_least}"
        return None


def _not_supported(who: str, node: NodeSupport, name: str, level: int) -> str | None:
    """QuorumFeatures.reasonNotSupported: a level outside the node's range (0-0 for a feature it lacks)."""
    low, high = node.ranges.get(name, (0, 0))
    if low <= level <= high:
        return None
    if high == 0:
        return f"{who} does not support this feature."
    return f"{who} only supports versions {low}-{high}"


def parse_feature_flag(text: str) -> tuple[str, int]:
    """`NAME=LEVEL` as `kafka-storage format --feature` reads it; ValueError with StorageTool's message."""
    name, sep, level = text.partition("=")
    if not sep:
        raise ValueError(f"Can't parse feature=level string {text}: equals sign not found.")
    try:
        value = int(level.strip())
    except ValueError:
        value = None
    if value is None or not -(1 << 15) <= value < (1 << 15):
        raise ValueError(f"Can't parse feature=level string {text}: unable to parse {level.strip()} as a short.")
    return name.strip(), value


def initial_levels(defaults: Mapping[str, int], supported: Mapping[str, tuple[int, int]],
                   chosen: Mapping[str, int]) -> dict[str, int]:
    """The levels a cluster starts with, as Kafka's Formatter computes them from `--feature` choices.

    `defaults` are the release's levels at its own metadata.version; choosing an older metadata.version gives
    the other features the lower of that and Kafka's default at the chosen one. ValueError with StorageTool's
    message for an unknown feature, a level the release lacks or a dependency not met."""
    if not supported:
        if chosen:
            raise ValueError(f"Unsupported feature: {next(iter(chosen))}. Supported features are: ")
        return dict(defaults)
    names = sorted(name for name in supported if name != METADATA_VERSION)
    for name, level in chosen.items():
        if name == METADATA_VERSION:
            low, high = supported[METADATA_VERSION]
            # the release knows one unstable metadata.version beyond its stable ones, as Kafka 4.3.1 knows 4.4-IV0
            known = high + 1 if high + 1 in METADATA_VERSION_NAMES else high
            if not low <= level <= known:
                raise ValueError(f"No MetadataVersion with feature level {level}. Valid feature levels are from "
                                 f"{low} to {known}.")
            if level > high:
                raise ValueError(f"metadata.version {METADATA_VERSION_NAMES[level]} is not yet stable.")
        elif name not in supported:
            raise ValueError(f"Unsupported feature: {name}. Supported features are: {', '.join(names)}")
        elif not supported[name][0] <= level <= supported[name][1]:
            raise ValueError(f"No feature:{name} with feature level {level}")
        elif name == KRAFT_VERSION and level > 0:
            # minibroker's controller quorum is static, as controller.quorum.voters makes Kafka's
            raise ValueError("Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of the "
                             "flags --standalone, --initial-controllers, or --no-initial-controllers is used. For "
                             "dynamic controllers support, try using one of --standalone, --initial-controllers, "
                             "or --no-initial-controllers and removing controller.quorum.voters.")
    levels = dict(defaults)
    if METADATA_VERSION in chosen:
        metadata_version = chosen[METADATA_VERSION]
        levels = {name: (metadata_version if name == METADATA_VERSION
                         else min(level, default_level(name, metadata_version)))
                  for name, level in defaults.items()}
    levels.update(chosen)
    for name, level in chosen.items():
        for needed, at_least in DEPENDENCIES.get((name, level), {}).items():
            if levels.get(needed, 0) < at_least:
                raise ValueError(f"{name} could not be set to {level} because it depends on {needed} level "
                                 f"{at_least}")
    return {name: level for name, level in levels.items() if level > 0}
