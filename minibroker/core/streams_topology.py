"""A streams group's topology against the cluster's topics (Kafka's streams.topics package: StreamsTopology,
ConfiguredTopology, InternalTopicManager).

The heartbeat declares subtopologies (source, repartition and changelog topics, copartition groups);
`configure_topology` derives how many tasks each subtopology has from the topics' partition counts, which
internal topics the broker must create and with how many partitions, or the status that keeps the group from
being assigned (missing source topics, missing or wrongly partitioned internal topics) with Kafka's message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

from .features import hash_map_order


class StatusCode(IntEnum):
    """StreamsGroupHeartbeatResponse.Status codes."""

    STALE_TOPOLOGY = 0
    MISSING_SOURCE_TOPICS = 1
    INCORRECTLY_PARTITIONED_TOPICS = 2
    MISSING_INTERNAL_TOPICS = 3
    SHUTDOWN_APPLICATION = 4
    ASSIGNMENT_DELAYED = 5


@dataclass(frozen=True)
class TopicInfo:
    """An internal topic of a subtopology: partitions 0 means "derived"; replication factor 0 the default."""

    name: str
    partitions: int = 0
    replication_factor: int = 0
    configs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Subtopology:
    """One subtopology as the heartbeat declares it (copartition groups index into its topic lists)."""

    subtopology_id: str
    source_topics: tuple[str, ...] = ()
    repartition_sink_topics: tuple[str, ...] = ()
    state_changelog_topics: tuple[TopicInfo, ...] = ()
    repartition_source_topics: tuple[TopicInfo, ...] = ()
    copartition_groups: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = ()

    def all_source_names(self) -> list[str]:
        return list(self.source_topics) + [t.name for t in self.repartition_source_topics]


@dataclass(frozen=True)
class Topology:
    """StreamsTopology: the epoch and the subtopologies; two are equal when every field is."""

    epoch: int
    subtopologies: tuple[Subtopology, ...]


@dataclass
class ConfiguredTopology:
    """InternalTopicManager.configureTopics' answer: tasks per subtopology when ready, else the status why not."""

    task_counts: dict[str, int] | None
    status: tuple[StatusCode, str] | None = None
    topics_to_create: dict[str, TopicInfo] = field(default_factory=dict)
    # when ready: the partitions of each internal topic, which StreamsGroupDescribe shows instead of the declared 0
    internal_partitions: dict[str, int] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        return self.task_counts is not None


def summarize_topics(names: set[str] | dict[str, TopicInfo]) -> str:
    """InternalTopicManager.summarizeTopics of a Java hash set or map's keys: up to three names, in its order."""
    ordered = hash_map_order(names)
    more = f" and {len(ordered) - 3} additional topics" if len(ordered) > 3 else ""
    return ", ".join(ordered[:3]) + more


def configure_topology(topology: Topology, partitions_of: Callable[[str], int | None]) -> ConfiguredTopology:
    """InternalTopicManager.configureTopics: tasks per subtopology, or the status that keeps the group not ready.

    `partitions_of` answers a topic's partition count, None when the topic does not exist.
    """
    missing_sources = {name for sub in topology.subtopologies for name in sub.source_topics
                       if partitions_of(name) is None}
    if missing_sources:
        return ConfiguredTopology(None, (StatusCode.MISSING_SOURCE_TOPICS,
                                         f"Source topics {summarize_topics(missing_sources)} are missing."))
    counts: dict[str, int] = {name: n for sub in topology.subtopologies for name in sub.source_topics
                              if (n := partitions_of(name)) is not None}
    repartition = {info.name: info for sub in topology.subtopologies for info in sub.repartition_source_topics}
    for name, info in repartition.items():
        if info.partitions > 0:
            counts[name] = info.partitions
    # a repartition topic without a fixed count gets the largest input of the subtopologies writing to it
    progress = True
    while progress:
        progress = False
        for name in repartition:
            if name in counts:
                continue
            writers = [sub for sub in topology.subtopologies if name in sub.repartition_sink_topics]
            names = [src for sub in writers for src in sub.all_source_names()]
            if names and all(src in counts for src in names):
                counts[name] = max(counts[src] for src in names)
                progress = True
    for name in repartition:
        if name not in counts:  # no writer declares it: the topic as it exists, else Kafka's default of one
            counts[name] = partitions_of(name) or 1
    for sub in topology.subtopologies:  # copartitioned repartition topics follow the group's sources
        for source_idx, repartition_idx in sub.copartition_groups:
            fixed = [counts[sub.source_topics[i]] for i in source_idx if i < len(sub.source_topics)]
            if len(set(fixed)) > 1:
                names = [sub.source_topics[i] for i in source_idx]
                return ConfiguredTopology(None, (StatusCode.INCORRECTLY_PARTITIONED_TOPICS,
                                                 f"Following topics do not have the same number partitions: "
                                                 f"[{', '.join(names)}]"))
            if fixed:
                for i in repartition_idx:
                    if i < len(sub.repartition_source_topics):
                        info = sub.repartition_source_topics[i]
                        if info.partitions <= 0:
                            counts[info.name] = fixed[0]
    task_counts: dict[str, int] = {}
    wanted: dict[str, TopicInfo] = {}
    for sub in topology.subtopologies:
        inputs = [counts[name] for name in sub.all_source_names()]
        task_counts[sub.subtopology_id] = max(inputs, default=0)
        for info in sub.repartition_source_topics:
            wanted[info.name] = TopicInfo(info.name, counts[info.name], info.replication_factor, info.configs)
        for info in sub.state_changelog_topics:
            wanted[info.name] = TopicInfo(info.name, task_counts[sub.subtopology_id], info.replication_factor,
                                          info.configs)
    missing = {name: info for name, info in wanted.items() if partitions_of(name) is None}
    if missing:
        return ConfiguredTopology(None, (StatusCode.MISSING_INTERNAL_TOPICS,
                                         f"Internal topics are missing: {summarize_topics(missing)}"), missing)
    wrong = sorted(name for name, info in wanted.items() if partitions_of(name) != info.partitions)
    if wrong:
        return ConfiguredTopology(None, (StatusCode.INCORRECTLY_PARTITIONED_TOPICS,
                                         f"Internal topics {', '.join(wrong)} have a different number of "
                                         f"partitions than expected."))
    return ConfiguredTopology(task_counts, internal_partitions={name: info.partitions for name, info in wanted.items()})


def referenced_topics(topology: Topology) -> list[str]:
    """Every topic the topology reads or writes, whose partition counts decide its configuration."""
    names: set[str] = set()
    for sub in topology.subtopologies:
        names.update(sub.source_topics, sub.repartition_sink_topics)
        names.update(t.name for t in sub.repartition_source_topics)
        names.update(t.name for t in sub.state_changelog_topics)
    return sorted(names)
