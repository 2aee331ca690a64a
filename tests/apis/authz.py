"""A cluster with Kafka's StandardAuthorizer and a way to send it requests as a given principal.

Requests go through `handle_frame` as bytes and answers come back decoded from bytes, so what a test
asserts is what a client would read; only the socket is left out.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

from minibroker.apis.context import Session
from minibroker.apis.dispatch import Deferred, NoReply, Reply, handle_frame
from minibroker.core.acls import (
    CLUSTER_NAME,
    STANDARD_AUTHORIZER,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import Node
from minibroker.core.config import BrokerConfig
from minibroker.protocol.messages import OffsetCommitRequest
from minibroker.testing import TEST_BROKER_CONFIG
from minibroker.testing.wire import WireClient

ADMIN = "User:admin"  # in super.users
NOW = 1_700_000_000_000
Op, Type, Pattern = AclOperation, ResourceType, PatternType


def open_cluster(*topics: str, **configs: Any) -> Cluster:
    """A one-node cluster without an authorizer (every principal may do everything), with one-partition `topics`."""
    cluster = Cluster(BrokerConfig({"node.id": 1, **configs}), clock=ManualClock(NOW))
    for name in topics:
        cluster.create_topic(name, 1, 1)
    return cluster


def secured_cluster(**configs: Any) -> Cluster:
    """A one-node cluster with the StandardAuthorizer, `User:admin` a super user, deny when no ACL is found."""
    settings = {**TEST_BROKER_CONFIG, "node.id": 1, "authorizer.class.name": STANDARD_AUTHORIZER, "super.users": ADMIN,
                **configs}
    return Cluster(BrokerConfig(settings), clock=ManualClock(NOW))


def acl(principal: str, operation: AclOperation, resource_type: ResourceType, name: str,
        pattern: PatternType = PatternType.LITERAL, permission: AclPermissionType = AclPermissionType.ALLOW,
        host: str = "*") -> AclBinding:
    return AclBinding(resource_type, name, pattern, principal, host, operation, permission)


def allow(cluster: Cluster, principal: str, operation: AclOperation, resource_type: ResourceType,
          name: str = CLUSTER_NAME, pattern: PatternType = PatternType.LITERAL) -> None:
    """Add an ALLOW ACL from any host."""
    assert cluster.authorizer is not None
    cluster.authorizer.add(acl(principal, operation, resource_type, name, pattern))


def deny(cluster: Cluster, principal: str, operation: AclOperation, resource_type: ResourceType,
         name: str = CLUSTER_NAME, pattern: PatternType = PatternType.LITERAL) -> None:
    """Add a DENY ACL from any host."""
    assert cluster.authorizer is not None
    cluster.authorizer.add(acl(principal, operation, resource_type, name, pattern, AclPermissionType.DENY))


def call(cluster: Cluster, request: Any, version: int, principal: str = "User:alice",
         host: str = "/127.0.0.1", to: Node | None = None) -> Any:
    """Send `request` at `version` as `principal` to node `to` (the first by default) and return the decoded
    answer (None for no answer)."""
    frame = WireClient.__new__(WireClient)
    frame.client_id, frame._correlation_id = "authz-test", 0
    data = frame.encode_request(request, version)[4:]
    outcome = handle_frame(memoryview(bytearray(data)), cluster, to or cluster.nodes[0],
                           Session(client_host=host, listener="PLAINTEXT", principal=principal))
    if isinstance(outcome, NoReply):
        return None
    if isinstance(outcome, Deferred):
        answer = outcome.encode(outcome.pending.result())
        assert answer is not None
    else:
        assert isinstance(outcome, Reply)
        answer = outcome.data
    raw = answer if isinstance(answer, bytes) else b"".join(bytes(part) for part in answer)
    assert struct.unpack_from(">i", raw)[0] == len(raw) - 4
    return WireClient.decode_response(raw[4:], request.API_KEY, version)[1]


def call_node(cluster: Cluster, request: Any, version: int, to: Node | None = None,
              principal: str = "User:ANONYMOUS") -> Any:
    """`call` to node `to` (the first by default), as the anonymous principal unless told."""
    return call(cluster, request, version, principal, to=to)


def coordinator(cluster: Cluster, group: str) -> Node:
    """The node that coordinates `group`."""
    return cluster.coordinator_node(group)


def other_node(cluster: Cluster, group: str) -> Node:
    """A node that does not coordinate `group`."""
    return next(n for n in cluster.nodes if n.node_id != cluster.coordinator_node(group).node_id)


def unknown_topic_id(name: str) -> uuid.UUID:
    """The id a request gives topic `name`, which the cluster does not know: one per name, the same every run."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"minibroker-test:unknown-topic:{name}")


def offset_commit(group: str, *partitions: tuple[str, int], generation: int = -1, member_id: str = "",
                  by_id: Cluster | None = None, offset: int = 5) -> Any:
    """OffsetCommit of `offset` for each (topic, partition), one topic entry each; with `by_id` topics go by id
    (v10), an unknown one by `unknown_topic_id`."""
    _Topic = OffsetCommitRequest.OffsetCommitRequestTopic
    topics = []
    for name, index in partitions:
        part = _Topic.OffsetCommitRequestPartition(partition_index=index, committed_offset=offset,
                                                   committed_leader_epoch=-1, committed_metadata="m")
        if by_id is None:
            topics.append(_Topic(name=name, partitions=[part]))
        else:
            known = by_id.topics.get(name)
            topics.append(_Topic(topic_id=known.topic_id if known else unknown_topic_id(name), partitions=[part]))
    return OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=generation, member_id=member_id,
                               group_instance_id=None, retention_time_ms=-1, topics=topics)
