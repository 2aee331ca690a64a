"""The differential suite's normalisation, written down once: what may differ between two correct brokers.

Each broker's answers go through its own `Normaliser`, which names what is its own choice logically, in
order of first appearance within a scenario ("node:0", "topic-id:0", ...), so the same structure compares
equal whatever the actual values:

- cluster id; the finalized features epoch (Kafka's is the offset its metadata log has reached)
- node ids (in every field that holds one, and a BROKER or BROKER_LOGGER resource's name), hosts and ports
  (not the "" host and -1 port of no node)
- topic ids (the zero UUID stays as it is), member ids (JoinGroup's leader too; the client-id prefix is kept),
  producer ids (in record batches too), fetch session ids
- timestamps within TIMESTAMP_TOLERANCE_MS of when the step ran (a pinned timestamp compares exactly)
- throttle time
- log directories (each broker's own folder) and their volume's size and free space (the host's)
- this run's unique names (vars) back to ${name}
- the order of arrays Kafka fills from a hash map (UNORDERED)
- in a ListGroups answer, the groups that are not this run's (other scenarios' and other runs' on the same broker)
- the request Kafka prints in an ACL API's authorization failure ("Request Request(processor=..., ...) needs
  ALTER permission.": its connection, session object and buffers)

Everything else is compared exactly: error codes and messages, nullability, tagged fields, record bytes.
"""

from __future__ import annotations

import re
from typing import Any

#: Fields that hold a node id (>= 0 is normalised; -1 "none" stays).
NODE_ID_FIELDS = frozenset({
    "node_id", "leader_id", "controller_id", "broker_id", "coordinator_id", "replica_nodes", "isr_nodes",
    "offline_replicas", "eligible_leader_replicas", "last_known_elr", "preferred_read_replica",
})
#: Fields that hold a group member id (JoinGroup's leader is one).
MEMBER_ID_FIELDS = frozenset({"member_id", "leader"})
#: Fields that hold the size or free space of a log directory's volume (-1, unknown, stays).
VOLUME_FIELDS = frozenset({"total_bytes", "usable_bytes"})
TIMESTAMP_TOLERANCE_MS = 10 * 60 * 1000
BATCH_HEADER_SIZE = 61  # a v2 record batch's: its producer id at bytes 43-50, its CRC at 17-20
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
#: (API, array path without indices) -> the field its entries are sorted by: arrays whose order Kafka takes
#: from a hash map.
UNORDERED: dict[tuple[str, str], str | tuple[str, ...]] = {
    ("ApiVersions", "supported_features"): "name",
    ("ApiVersions", "finalized_features"): "name",
    ("Metadata", "brokers"): "node_id",
    ("Metadata", "topics"): "name",
    ("AlterReplicaLogDirs", "results"): "topic_name",
    ("AlterReplicaLogDirs", "results.partitions"): "partition_index",
    # GroupCoordinatorService answers groups per __consumer_offsets partition, the partitions from a hash map
    ("DescribeGroups", "groups"): "group_id",
    ("ListGroups", "groups"): "group_id",
    ("ConsumerGroupDescribe", "groups"): "group_id",
    ("ConsumerGroupDescribe", "groups.members"): "member_id",  # ConsumerGroup's members: a TimelineHashMap by id
    ("JoinGroup", "members"): "member_id",  # ClassicGroup's members: a HashMap by member id
    ("ShareGroupDescribe", "groups"): "group_id",
    ("ShareGroupDescribe", "groups.members"): "member_id",  # ShareGroup's members: a TimelineHashMap by id
    ("DeleteGroups", "results"): "group_id",
    ("DescribeProducers", "topics.partitions.active_producers"): "producer_id",  # ProducerStateManager's map
    # DescribeAclsResponse.aclsResources groups the bindings by pattern with Collectors.groupingBy (a HashMap)
    ("DescribeAcls", "resources"): ("resource_type", "resource_name", "pattern_type"),
    # the controller's AclControlManager finds the ACLs a filter deletes in its map of ACLs by id
    ("DeleteAcls", "filter_results.matching_acls"): ("resource_type", "resource_name", "pattern_type", "principal",
                                                     "host", "operation", "permission_type"),
}
#: ConfigResource types whose resource name is a node id (BROKER, BROKER_LOGGER): normalised as node ids.
NODE_RESOURCE_TYPES = frozenset({4, 8})
#: How Kafka's ACL APIs name the refused request (AuthHelper: "Request " + request + " needs ..."): Java's
#: toString of it, with connection ids, object hashes and buffer positions.
_ACL_REQUEST = re.compile(r"^Request Request\(.*\) needs", re.DOTALL)
_MEMBER_ID = re.compile(r"^(.*)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$|^(.*)-[A-Za-z0-9_-]{22}$")


class Normaliser:
    """Normalises one broker's answers within one scenario; logical names persist across its steps."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names  # var -> this run's value
        self._logical: dict[tuple[str, Any], str] = {}

    def logical(self, kind: str, value: Any) -> str:
        """The logical name of `value` among the `kind` values seen so far ("node:0", "node:1", ...)."""
        key = (kind, value)
        if key not in self._logical:
            self._logical[key] = f"{kind}:{sum(1 for k, _ in self._logical if k == kind)}"
        return self._logical[key]

    def answer(self, api: str, response: dict[str, Any], sent_at_ms: int) -> dict[str, Any]:
        """A normalised copy of one decoded answer (plain values, see scenario.plain)."""
        if api == "ListGroups" and isinstance(response.get("groups"), list):
            ours = set(self.names.values())
            response = {**response, "groups": [group for group in response["groups"]
                                               if isinstance(group, dict) and group.get("group_id") in ours]}
        result = self._walk(api, "", None, response, sent_at_ms)
        assert isinstance(result, dict)
        return result

    def _walk(self, api: str, path: str, name: str | None, value: Any, now_ms: int) -> Any:
        if isinstance(value, dict):
            out = {key: self._walk(api, f"{path}.{key}" if path else key, key, item, now_ms)
                   for key, item in value.items()}
            name_ = value.get("resource_name")
            if value.get("resource_type") in NODE_RESOURCE_TYPES and isinstance(name_, str) and name_.isdigit():
                out["resource_name"] = self.logical("node", int(name_))
            return out
        if isinstance(value, list):
            items = [self._walk(api, path, name, item, now_ms) for item in value]
            key = UNORDERED.get((api, path))
            if key is not None:
                keys = (key,) if isinstance(key, str) else key
                items.sort(key=lambda item: [str(item.get(k)) for k in keys] if isinstance(item, dict) else [str(item)])
            return items
        return self._field(name, value, now_ms)

    def _field(self, name: str | None, value: Any, now_ms: int) -> Any:
        if value is None or name is None:
            return value
        if name == "throttle_time_ms":
            return "<throttle>"
        if name == "cluster_id":
            return "<cluster>"
        if name == "finalized_features_epoch" and isinstance(value, int) and value >= 0:
            return "<metadata offset>"  # Kafka's is its metadata log's offset, which grows all the time
        if name in NODE_ID_FIELDS and isinstance(value, int) and value >= 0:
            return self.logical("node", value)
        if name == "host" and value != "":
            return "<host>"  # "" (no node) is compared as it is
        if name == "port" and value != -1:
            return "<port>"
        if name == "log_dir" and isinstance(value, str) and value:
            return f"<{self.logical('log-dir', value)}>"  # each broker's own folder (Kafka's is its launcher's)
        if name in VOLUME_FIELDS and isinstance(value, int) and value >= 0:
            return "<volume bytes>"  # the host's disk or memory, changing as anything on the machine writes
        if name == "topic_id" and value != ZERO_UUID:
            return self.logical("topic-id", value)
        if name == "producer_id" and isinstance(value, int) and value >= 0:
            return self.logical("producer", value)
        if name == "records" and isinstance(value, str) and value.startswith("hex:"):
            return self._records(value, now_ms)
        if name == "session_id" and isinstance(value, int) and value != 0:
            return self.logical("session", value)
        if name in MEMBER_ID_FIELDS and isinstance(value, str) and value:
            match = _MEMBER_ID.match(value)
            prefix = (match.group(1) or match.group(2)) if match else None
            member = self.logical("member", value)
            return f"{prefix}-<{member}>" if prefix is not None else f"<{member}>"
        if _is_time(name) and isinstance(value, int) and abs(value - now_ms) <= TIMESTAMP_TOLERANCE_MS:
            return "<now>"
        if name == "error_message" and isinstance(value, str):
            value = _ACL_REQUEST.sub("Request <request> needs", value)
        if isinstance(value, str):
            for var, actual in self.names.items():
                value = value.replace(actual, "${" + var + "}")
        return value

    def _records(self, value: str, now_ms: int) -> str:
        """Record bytes with each v2 batch's producer id named logically, its first and max timestamps as <now>
        when they are (a transaction marker's are its append time), and its CRC (which covers both) left out."""
        data = bytes.fromhex(value[4:])
        out, pos = [], 0
        while pos + BATCH_HEADER_SIZE <= len(data):
            end = pos + 12 + int.from_bytes(data[pos + 8:pos + 12], "big")
            producer_id = int.from_bytes(data[pos + 43:pos + 51], "big", signed=True)
            if data[pos + 16] != 2 or end > len(data):
                break
            times = [data[at:at + 8] for at in (pos + 27, pos + 35)]
            shown = ["<now>" if abs(int.from_bytes(t, "big", signed=True) - now_ms) <= TIMESTAMP_TOLERANCE_MS
                     else t.hex() for t in times]
            producer = (f"<{self.logical('producer', producer_id)}>" if producer_id >= 0
                        else data[pos + 43:pos + 51].hex())
            changed = producer_id >= 0 or "<now>" in shown  # else the CRC is compared too
            out += [data[pos:pos + 17].hex(), "<crc>" if changed else data[pos + 17:pos + 21].hex(),
                    data[pos + 21:pos + 27].hex(), *shown, producer, data[pos + 51:end].hex()]
            pos = end
        return "hex:" + "".join(out) + data[pos:].hex()


def _is_time(name: str) -> bool:
    return name.endswith(("_time_ms", "_timestamp", "_timestamp_ms")) or name == "timestamp"
