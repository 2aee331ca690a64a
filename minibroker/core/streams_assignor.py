"""Kafka 4.3.1's StickyTaskAssignor for streams groups: the target assignment of active and standby tasks.

Active tasks go back to their previous owner (then to a member that had them as standby) within the fair share,
the rest to the least-loaded process; standby tasks, for the stateful subtopologies only, to their previous
active owner or standby while under the total share, else to the least-loaded process that does not hold the
task. Ties fall as Kafka's java.util.PriorityQueue heaps and HashMaps order processes and members, so the same
member and process ids get the same assignment as from Kafka.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from .cluster_model import java_string_hash

_T = TypeVar("_T")
Task = tuple[str, int]  # (subtopology id, partition)
Holder = tuple[str, str]  # a previous owner: (process id, member id)
Assignment = tuple[Iterable[Task], Iterable[Task]]  # (active, standby)
Target = dict[str, tuple[set[Task], set[Task]]]  # member id -> (active, standby)


def _java_hash_map_order(keys: Iterable[str], expected_size: int | None = None) -> list[str]:
    """`keys` in the order a java.util.HashMap<String, _> iterates them: `new HashMap<>(expected_size)`, or the
    default capacity of 16 without it, grown as its entries are put."""
    unique = list(dict.fromkeys(keys))
    capacity = 16
    if expected_size is not None:
        capacity = 1
        while capacity < expected_size:
            capacity *= 2
    while len(unique) > int(capacity * 0.75):
        capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    return sorted(unique, key=bucket)  # stable: one bucket keeps the order of insertion


class _JavaHeap(Generic[_T]):
    """java.util.PriorityQueue's binary heap, whose order among equal elements the assignor's choices follow."""

    def __init__(self, key: Callable[[_T], Any]) -> None:
        self.key = key
        self.items: list[_T] = []

    def add(self, item: _T) -> None:
        k = len(self.items)
        self.items.append(item)
        while k > 0:
            parent = (k - 1) >> 1
            if self.key(item) >= self.key(self.items[parent]):
                break
            self.items[k] = self.items[parent]
            k = parent
        self.items[k] = item

    def poll(self) -> _T | None:
        if not self.items:
            return None
        first, last = self.items[0], self.items.pop()
        n = len(self.items)
        if n:
            k = 0
            while k < n >> 1:
                child = 2 * k + 1
                if child + 1 < n and self.key(self.items[child]) > self.key(self.items[child + 1]):
                    child += 1
                if self.key(last) <= self.key(self.items[child]):
                    break
                self.items[k] = self.items[child]
                k = child
            self.items[k] = last
        return first




class _Process:
    """ProcessState: a process's members, their task counts and the tasks assigned to it."""

    def __init__(self, process_id: str) -> None:
        self.process_id = process_id
        self.task_count = 0
        self.counts: dict[str, int] = {}  # member id -> its tasks, active and standby, in the order added
        self.active: dict[str, set[Task]] = {}
        self.standby: dict[str, set[Task]] = {}
        self.tasks: set[Task] = set()
        self._by_load: _JavaHeap[list[Any]] | None = None  # [member id, count] entries, as Kafka's

    @property
    def load(self) -> float:
        return self.task_count / len(self.counts) if self.counts else -1.0

    def add_member(self, member_id: str) -> None:
        self.counts[member_id] = 0

    def add(self, member_id: str, task: Task, active: bool) -> int:
        """addTask: to the named member; the members' order by load is rebuilt at the next least-loaded choice."""
        self._by_load = None
        return self._add(member_id, task, active)

    def _add(self, member_id: str, task: Task, active: bool) -> int:
        self.task_count += 1
        self.tasks.add(task)
        (self.active if active else self.standby).setdefault(member_id, set()).add(task)
        self.counts[member_id] += 1
        return self.counts[member_id]

    def add_to_least_loaded(self, task: Task, active: bool) -> int:
        """addTaskToLeastLoadedMember: the member with the fewest tasks, ties as Kafka's heap leaves them."""
        if len(self.counts) == 1:
            return self._add(next(iter(self.counts)), task, active)
        if self._by_load is None:
            self._by_load = _JavaHeap(lambda entry: entry[1])
            for member_id in _java_hash_map_order(self.counts):
                self._by_load.add([member_id, self.counts[member_id]])
        entry = self._by_load.poll()
        assert entry is not None
        entry[1] = self._add(entry[0], task, active)
        self._by_load.add(entry)
        return int(entry[1])


def _tasks_per_member(tasks: int, members: int) -> int:
    return 0 if members == 0 else -(-tasks // members)


class _StickyTaskAssignor:
    """Kafka 4.3.1's StickyTaskAssignor: active tasks back to their previous owner (then to a previous standby) within
    the quota, the rest to the least-loaded process; standby tasks of stateful subtopologies only, to the previous
    active owner or standby when under their total quota, else to the least-loaded process without the task."""

    def __init__(self, task_counts: Mapping[str, int], stateful: set[str], processes: Mapping[str, str],
                 previous: Mapping[str, Assignment], num_standby_replicas: int) -> None:
        self.standbys = num_standby_replicas
        self.active_tasks = [(sid, p) for sid in sorted(task_counts) for p in range(task_counts[sid])]
        self.stateful_tasks = [t for t in self.active_tasks if t[0] in stateful]
        self.total_active = len(self.active_tasks)
        self.total = self.total_active + len(self.stateful_tasks) * num_standby_replicas
        self.members_with_active_capacity = self.members_with_capacity = len(processes)
        self.active_per_member = _tasks_per_member(self.total_active, len(processes))
        self.per_member = _tasks_per_member(self.total, len(processes))
        self.processes: dict[str, _Process] = {}
        self.prev_active: dict[Task, Holder] = {}
        self.prev_standby: dict[Task, list[Holder]] = {}
        for member_id in _java_hash_map_order(processes):
            process_id = processes[member_id]
            self.processes.setdefault(process_id, _Process(process_id)).add_member(member_id)
            active, standby = previous.get(member_id, ((), ()))
            for task in active:
                self.prev_active[task] = (process_id, member_id)
            for task in standby:
                self.prev_standby.setdefault(task, []).append((process_id, member_id))
        self.process_order = _java_hash_map_order(self.processes, len(processes))

    def _process_heap(self) -> _JavaHeap[_Process]:
        heap: _JavaHeap[_Process] = _JavaHeap(lambda process: process.load)
        for process_id in self.process_order:
            heap.add(self.processes[process_id])
        return heap

    def _active_taken(self, count: int) -> None:
        if count == self.active_per_member:
            self.members_with_active_capacity -= 1
            self.total_active -= count
            self.active_per_member = _tasks_per_member(self.total_active, self.members_with_active_capacity)

    def _taken(self, count: int) -> None:
        if count == self.per_member:
            self.members_with_capacity -= 1
            self.total -= count
            self.per_member = _tasks_per_member(self.total, self.members_with_capacity)

    def _least_loaded_previous(self, holders: list[Holder] | None, task: Task | None) -> Holder | None:
        """findPrevMemberWithLeastLoad."""
        if not holders:
            return None
        candidate = holders[0]
        process = self.processes[candidate[0]]
        process_load, member_load = process.load, process.counts[candidate[1]]
        for holder in holders[1:]:
            other = self.processes[holder[0]]
            if other.load < process_load and (task is None or task not in other.tasks) \
                    and other.counts[holder[1]] < member_load:
                candidate, process_load, member_load = holder, other.load, other.counts[holder[1]]
        if task is None or task not in process.tasks:
            return candidate
        return None

    def assign(self, member_ids: Iterable[str]) -> Target:
        self._assign_active()
        if self.standbys > 0:
            self._assign_standby()
        result: Target = {member_id: (set(), set()) for member_id in member_ids}
        for process in self.processes.values():
            for member_id, tasks in process.active.items():
                result[member_id][0].update(tasks)
            for member_id, tasks in process.standby.items():
                result[member_id][1].update(tasks)
        return result

    def _give(self, holder: Holder, task: Task, active: bool) -> bool:
        process = self.processes[holder[0]]
        count = process.counts[holder[1]]
        if count >= (self.active_per_member if active else self.per_member):
            return False
        count = process.add(holder[1], task, active)
        if active:
            self._active_taken(count)
        self._taken(count)
        return True

    def _assign_active(self) -> None:
        remaining = sorted(self.active_tasks, key=lambda t: (t[1], t[0]))
        remaining = [t for t in remaining if t not in self.prev_active or not self._give(self.prev_active[t], t, True)]
        left = []
        for task in remaining:
            holder = self._least_loaded_previous(self.prev_standby.get(task), None)
            if holder is None or not self._give(holder, task, True):
                left.append(task)
        heap = self._process_heap()
        for task in sorted(left):
            process = heap.poll()
            assert process is not None
            count = process.add_to_least_loaded(task, True)
            self._active_taken(count)
            self._taken(count)
            heap.add(process)

    def _assign_standby(self) -> None:
        to_least_loaded: list[tuple[Task, int]] = []
        for task in sorted(self.stateful_tasks, key=lambda t: (t[1], t[0]), reverse=True):
            for i in range(self.standbys):
                holder = self.prev_active.get(task)
                if holder is not None and task not in self.processes[holder[0]].tasks \
                        and self._give(holder, task, False):
                    continue
                holder = self._least_loaded_previous(self.prev_standby.get(task), task)
                if holder is not None and self._give(holder, task, False):
                    continue
                to_least_loaded.append((task, self.standbys - i))
                break
        heap = self._process_heap()
        for task, replicas in sorted(to_least_loaded, key=lambda entry: entry[0], reverse=True):
            for _ in range(replicas):
                if not self._standby_to_least_loaded(heap, task):
                    break  # Kafka logs that there is not enough capacity for the requested standby replicas

    def _standby_to_least_loaded(self, heap: _JavaHeap[_Process], task: Task) -> bool:
        """assignStandbyToMemberWithLeastLoad: the least-loaded process without the task, polled in turn."""
        process = heap.poll()
        if process is None:
            return False
        found = False
        if task not in process.tasks:
            self._taken(process.add_to_least_loaded(task, False))
            found = True
        elif heap.items:
            found = self._standby_to_least_loaded(heap, task)
        heap.add(process)
        return found


def assign_tasks(task_counts: Mapping[str, int], stateful: set[str], processes: Mapping[str, str],
                 previous: Mapping[str, Assignment], num_standby_replicas: int) -> Target:
    """The target active and standby tasks of each member (`processes`: member id to process id) from the tasks per
    subtopology, the `stateful` subtopologies (with changelog topics: only their tasks get standbys) and each member's
    previous target (active, standby)."""
    if not processes:
        return {}
    assignor = _StickyTaskAssignor(task_counts, stateful, processes, previous, num_standby_replicas)
    return assignor.assign(processes)
