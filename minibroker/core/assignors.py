"""The server-side assignors of KIP-848 consumer groups (Kafka's group-coordinator `assignor` package).

`group.consumer.assignors` names them, by short name or by Kafka's class name: `uniform` (UniformAssignor: every
member subscribed to a topic gets an even share of its partitions, keeping what it has where it can) and `range`
(RangeAssignor: contiguous ranges per topic in member-id order). Each takes the members' subscribed topics, the
partition counts and the current assignment, and returns the new target assignment per member.
"""

from __future__ import annotations

from collections.abc import Mapping

Assignment = dict[str, set[int]]  # topic name -> partitions

# Kafka's assignor class names, accepted in `group.consumer.assignors` beside the short names
ASSIGNOR_CLASSES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}


def uniform_assign(members: Mapping[str, set[str]], counts: Mapping[str, int],
                   current: Mapping[str, Assignment]) -> dict[str, Assignment]:
    """UniformAssignor: partitions spread evenly over the members subscribed to them, moving as few as possible."""
    result: dict[str, set[tuple[str, int]]] = {m: set() for m in members}
    taken: set[tuple[str, int]] = set()
    for member_id in sorted(members):  # keep what each member has and still subscribes to
        for topic, partitions in current.get(member_id, {}).items():
            if topic in members[member_id]:
                for p in partitions:
                    if p < counts.get(topic, 0) and (topic, p) not in taken:
                        result[member_id].add((topic, p))
                        taken.add((topic, p))
    eligible: dict[tuple[str, int], list[str]] = {}
    for topic in sorted({t for subs in members.values() for t in subs}):
        subscribers = sorted(m for m, subs in members.items() if topic in subs)
        for p in range(counts.get(topic, 0)):
            eligible[(topic, p)] = subscribers
    for tp in sorted(eligible):
        if tp not in taken:
            owner = min(eligible[tp], key=lambda m: (len(result[m]), m))
            result[owner].add(tp)
    # balance: move partitions from the most to the least loaded member that may take them, the highest first, so
    # a member keeps the first of its partitions as Kafka's uniform assignor does (a second member of a group on
    # two partitions takes partition 1, on the reference broker)
    moved = True
    while moved:
        moved = False
        for tp in sorted(eligible, reverse=True):
            owner = next(m for m in eligible[tp] if tp in result[m])
            least = min(eligible[tp], key=lambda m: (len(result[m]), m))
            if len(result[owner]) - len(result[least]) > 1:
                result[owner].discard(tp)
                result[least].add(tp)
                moved = True
    return {m: _by_topic(tps) for m, tps in result.items()}


def range_assign(members: Mapping[str, set[str]], counts: Mapping[str, int],
                 current: Mapping[str, Assignment]) -> dict[str, Assignment]:
    """RangeAssignor: per topic, contiguous ranges of partitions to the subscribed members in member-id order."""
    result: dict[str, Assignment] = {m: {} for m in members}
    for topic in sorted({t for subs in members.values() for t in subs}):
        subscribers = sorted(m for m, subs in members.items() if topic in subs)
        count = counts.get(topic, 0)
        quota, extra = divmod(count, len(subscribers))
        start = 0
        for index, member_id in enumerate(subscribers):
            size = quota + (1 if index < extra else 0)
            if size:
                result[member_id][topic] = set(range(start, start + size))
            start += size
    return result


def _by_topic(partitions: set[tuple[str, int]]) -> Assignment:
    out: Assignment = {}
    for topic, p in partitions:
        out.setdefault(topic, set()).add(p)
    return out


ASSIGNORS = {"uniform": uniform_assign, "range": range_assign}
