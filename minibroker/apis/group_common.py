"""Shared by the group APIs: the coordinator check every group request makes.

It comes after the request's authorization: KafkaApis authorizes before it asks the group coordinator,
so a refused caller learns nothing about where the group lives.
"""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from .context import RequestContext


def coordinator_error(ctx: RequestContext, group_id: str) -> ErrorCode | None:
    """NOT_COORDINATOR when this node does not coordinate `group_id`, else None."""
    if ctx.cluster.coordinator_node(group_id).node_id != ctx.node.node_id:
        return ErrorCode.NOT_COORDINATOR
    return None
