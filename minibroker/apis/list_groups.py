"""ListGroups (16): every group, filtered by state and type.

Versions 0-5: v1 adds the throttle time; v3 is flexible; v4 adds the states filter and each group's state
(KIP-518); v5 the types filter and each group's type (KIP-848). Mirrors KafkaApis.handleListGroupsRequest.

DESCRIBE on the cluster lists every group; without it only the groups the caller may DESCRIBE are listed (the
others are left out, no error). Classic, KIP-848 consumer and KIP-932 share groups are listed alike, each with its type.
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..protocol.messages import ListGroupsRequest, ListGroupsResponse
from .context import RequestContext
from .share_common import share_state

API_KEY = 16
MIN_VERSION, MAX_VERSION = 0, 5

CLASSIC = "classic"
CONSUMER = "consumer"
STREAMS = "streams"
SHARE = "share"


def handle(request: ListGroupsRequest, ctx: RequestContext) -> ListGroupsResponse:
    states = {s.lower() for s in request.states_filter} if ctx.api_version >= 4 else set()
    types = {t.lower() for t in request.types_filter} if ctx.api_version >= 5 else set()
    sees_all = ctx.authorize_cluster(AclOperation.DESCRIBE)
    groups = []
    listed: list[tuple[str, str, str, str]] = [  # (id, protocol type, state, type)
        (g.group_id, g.protocol_type or "", g.state.value, CLASSIC) for g in ctx.cluster.groups.classic_groups()]
    # KIP-848 consumer groups: protocol type "consumer", Kafka's ConsumerGroupState names
    listed += [(g.group_id, CONSUMER, g.state.value, CONSUMER) for g in ctx.cluster.groups.consumer_groups()]
    # KIP-1071 streams groups: protocol type and type "streams", StreamsGroupState names
    listed += [(g.group_id, STREAMS, g.state().value, STREAMS) for g in ctx.cluster.groups.streams_groups()]
    # KIP-932 share groups: protocol type and type "share", ShareGroupState names
    shares = share_state(ctx.cluster).coordinator
    shares.expire()
    listed += [(g.group_id, SHARE, g.state, SHARE) for g in shares.groups.values()]
    for group_id, protocol_type, state, group_type in listed:
        if states and state.lower() not in states:
            continue
        if types and group_type not in types:
            continue
        if not sees_all and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            continue
        groups.append(ListGroupsResponse.ListedGroup(group_id=group_id, protocol_type=protocol_type,
                                                     group_state=state, group_type=group_type))
    return ListGroupsResponse(throttle_time_ms=0, error_code=0, groups=groups)
