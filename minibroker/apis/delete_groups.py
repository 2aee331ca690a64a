"""DeleteGroups (42): remove empty groups and their offsets.

Versions 0-3: v1 is v0 (the answer may come before throttling); v2 is flexible; v3 adds a per-group error
message. Mirrors KafkaApis.handleDeleteGroupsRequest and GroupCoordinatorService.deleteGroups.

A group named more than once is deleted and answered once; each group needs DELETE, and the refused ones are
answered GROUP_AUTHORIZATION_FAILED after the others and not deleted. Classic, KIP-848 consumer and KIP-932 share
groups alike: a group with members is NON_EMPTY_GROUP.
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import DeleteGroupsRequest, DeleteGroupsResponse
from .context import RequestContext
from .group_common import coordinator_error
from .share_common import share_state

API_KEY = 42
MIN_VERSION, MAX_VERSION = 0, 3

_MESSAGES = {
    ErrorCode.NON_EMPTY_GROUP: "The group is not empty.",
    ErrorCode.GROUP_ID_NOT_FOUND: "The group id does not exist.",
}


def handle(request: DeleteGroupsRequest, ctx: RequestContext) -> DeleteGroupsResponse:
    # KafkaApis.handleDeleteGroupsRequest: groupsNames.distinct before anything else
    groups = list(dict.fromkeys(request.groups_names))
    deletable = ctx.authorized_names(AclOperation.DELETE, ResourceType.GROUP, groups)
    authorized = [g for g in groups if g in deletable]
    local = [g for g in authorized if coordinator_error(ctx, g) is None]
    shares = share_state(ctx.cluster).coordinator
    share_ids = [g for g in local if g in shares.groups]  # KIP-932: a share group is deleted by its coordinator
    classic_and_consumer = [g for g in local if g not in shares.groups]
    codes = dict(zip(classic_and_consumer, ctx.cluster.groups.delete_groups(classic_and_consumer), strict=True))
    codes.update((g, shares.delete(g)) for g in share_ids)
    results = []
    for group_id in authorized:
        code = codes.get(group_id, ErrorCode.NOT_COORDINATOR)
        results.append(DeleteGroupsResponse.DeletableGroupResult(group_id=group_id, error_code=code,
                                                                 error_message=_MESSAGES.get(code)))
    # Kafka adds the refused groups (with no message) after the coordinator's results
    results += [DeleteGroupsResponse.DeletableGroupResult(group_id=group_id,
                                                          error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED,
                                                          error_message=None)
                for group_id in groups if group_id not in deletable]
    return DeleteGroupsResponse(throttle_time_ms=0, results=results)
