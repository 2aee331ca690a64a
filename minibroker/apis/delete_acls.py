"""DeleteAcls (31): remove the ACLs each filter matches, as KRaft Kafka does.

Versions 1-3, and v0 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0): v1 adds the
pattern type; v2 is flexible; v3 adds the USER resource type. v0 has no pattern type: Kafka reads it as
LITERAL, so a v0 filter matches only LITERAL patterns, and the answer, which cannot name a pattern type either,
holds only LITERAL ones. Mirrors AclApis.handleDeleteAcls and AclControlManager.deleteAcls on the controller,
to which Kafka 4 forwards DeleteAcls.

It needs ALTER on the cluster (else CLUSTER_AUTHORIZATION_FAILED for every filter); with no
`authorizer.class.name` every filter gets SECURITY_DISABLED ("No Authorizer is configured."). Each filter
answers with the ACLs it removed; an ACL two filters match is reported by both. As
DeleteAclsRequest.normalizeAndValidate does while the request is parsed, a filter with an UNKNOWN code closes
the connection.
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclBinding, AclOperation
from ..protocol.errors import ErrorCode
from ..protocol.messages import DeleteAclsRequest, DeleteAclsResponse
from .acl_common import NO_AUTHORIZER, Refusal, authorizer_or_refusal, filter_of, refuse_unknown_elements
from .context import RequestContext

API_KEY = 31
MIN_VERSION, MAX_VERSION = 1, 3  # v0 went in Kafka 4.0 (KIP-896)
PRE_KIP896_MIN_VERSION = 0  # releases before 4.0 served v0

_FilterResult = DeleteAclsResponse.DeleteAclsFilterResult
_Matching = _FilterResult.DeleteAclsMatchingAcl


def handle(request: DeleteAclsRequest, ctx: RequestContext) -> DeleteAclsResponse:
    refuse_unknown_elements(
        API_KEY, ctx.api_version,
        ((f.resource_type_filter, f.pattern_type_filter, f.operation, f.permission_type) for f in request.filters),
        f"Filters contain UNKNOWN elements, filters: {request.filters}")
    authorizer = authorizer_or_refusal(ctx, AclOperation.ALTER, NO_AUTHORIZER)
    if isinstance(authorizer, Refusal):
        return _every(request, *authorizer)
    # AclControlManager.deleteAcls matches every filter against the ACLs as they were, then removes the union
    filters = [filter_of(f) for f in request.filters]
    matched = [authorizer.acls(acl_filter) for acl_filter in filters]
    for acls in matched:
        for acl in acls:
            authorizer.remove(acl)
    return DeleteAclsResponse(throttle_time_ms=0, filter_results=[
        _FilterResult(error_code=0, error_message=None, matching_acls=[_matching(acl) for acl in acls])
        for acls in matched])


def _matching(acl: AclBinding) -> Any:
    return _Matching(error_code=0, error_message=None, resource_type=acl.resource_type,
                     resource_name=acl.resource_name, pattern_type=acl.pattern_type, principal=acl.principal,
                     host=acl.host, operation=acl.operation, permission_type=acl.permission_type)


def _every(request: DeleteAclsRequest, code: ErrorCode, message: str | None) -> DeleteAclsResponse:
    """DeleteAclsRequest.getErrorResponse: one result per filter, all with `code`."""
    return DeleteAclsResponse(throttle_time_ms=0, filter_results=[
        _FilterResult(error_code=code, error_message=message, matching_acls=[]) for _ in request.filters])
