"""Shared by the group APIs: the coordinator check every group request makes.

It comes after the request's authorization: KafkaApis authorizes before it asks the group coordinator,
so a refused caller learns nothing about where the group lives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from .authorized_operations import NOT_REQUESTED_INT32, to_32bit_field
from .context import RequestContext


def coordinator_error(ctx: RequestContext, group_id: str) -> ErrorCode | None:
    """NOT_COORDINATOR when this node does not coordinate `group_id`, else None."""
    if ctx.cluster.coordinator_node(group_id).node_id != ctx.node.node_id:
        return ErrorCode.NOT_COORDINATOR
    return None


def heartbeat_refusal(ctx: RequestContext, group_id: str, topic_names: list[str] | None) -> ErrorCode | None:
    """What KafkaApis refuses before a consumer or share group heartbeat reaches its coordinator: no READ on the
    group, no DESCRIBE on a topic it subscribes to (a client may not learn of topics it cannot describe by
    subscribing to them), or a node that does not coordinate the group; None when none applies."""
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    if topic_names and len(ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, topic_names)) < len(
            set(topic_names)):
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    return coordinator_error(ctx, group_id)


def assignment_by_topic_id(ctx: RequestContext, assignment: Mapping[str, set[int]], entry_type: Any,
                           with_names: bool = False) -> list[Any]:
    """An assignment as the wire carries it: one `entry_type(topic_id, partitions)` per topic that still exists
    and has partitions, topics by name, partitions in order. A describe's entries (`with_names`) name the
    topic too (`topic_name`); a heartbeat's do not."""
    entries = []
    for name, partitions in sorted(assignment.items()):
        topic = ctx.cluster.topic(name)
        if topic is not None and partitions:
            named = {"topic_name": name} if with_names else {}
            entries.append(entry_type(topic_id=topic.topic_id, partitions=sorted(partitions), **named))
    return entries


def failed_group(entry_type: Any, group_id: str, code: ErrorCode, message: str | None = None, **fields: Any) -> Any:
    """A KIP-848-style describe's entry for a group it does not describe: the error, no state, zero epochs, no
    members, authorized operations not requested; `fields` are the API's own (an assignor name, a topology)."""
    return entry_type(error_code=code, error_message=message, group_id=group_id, group_state="", group_epoch=0,
                      assignment_epoch=0, members=[], authorized_operations=NOT_REQUESTED_INT32, **fields)


def describe_each(ctx: RequestContext, group_ids: list[str], include_authorized_operations: bool,
                  failed: Callable[[str, ErrorCode], Any], describe: Callable[[str], Any]) -> list[Any]:
    """The per-group answers of a KIP-848-style describe (ConsumerGroupDescribe, ShareGroupDescribe, ...):
    DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED; the coordinator check; then `describe(group_id)`,
    with the caller's authorized operations on the group when asked for and it was found."""
    groups = []
    for group_id in group_ids:
        if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            groups.append(failed(group_id, ErrorCode.GROUP_AUTHORIZATION_FAILED))
            continue
        error = coordinator_error(ctx, group_id)
        if error is not None:
            groups.append(failed(group_id, error))
            continue
        described = describe(group_id)
        if described.error_code == 0 and include_authorized_operations:
            described.authorized_operations = to_32bit_field(ctx.authorized_operations(ResourceType.GROUP, group_id))
        groups.append(described)
    return groups
