"""DeleteAcls (31) v1-3: SECURITY_DISABLED for every filter, as Kafka answers with no authorizer configured.

Kafka 4 forwards DeleteAcls to the controller, whose AclApis.handleDeleteAcls with `authorizer`
None answers DeleteAclsRequest.getErrorResponse(SecurityDisabledException("No Authorizer is
configured.")): one filter result per filter, error code 54 and that message, no matching ACLs.
As DeleteAclsRequest.normalizeAndValidate does while the request is parsed, a filter with an
UNKNOWN (0) pattern type, resource type, operation or permission type closes the connection.
"""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import DeleteAclsRequest, DeleteAclsResponse
from .acl_common import NO_AUTHORIZER, refuse_unknown_elements
from .context import RequestContext

API_KEY = 31
MIN_VERSION, MAX_VERSION = 1, 3  # v0 went in Kafka 4.0 (KIP-896)

_FilterResult = DeleteAclsResponse.DeleteAclsFilterResult


def handle(request: DeleteAclsRequest, ctx: RequestContext) -> DeleteAclsResponse:
    refuse_unknown_elements(
        API_KEY, ctx.api_version,
        (code for f in request.filters
         for code in (f.pattern_type_filter, f.resource_type_filter, f.operation, f.permission_type)),
        f"Filters contain UNKNOWN elements, filters: {request.filters}")
    return DeleteAclsResponse(throttle_time_ms=0, filter_results=[
        _FilterResult(error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER, matching_acls=[])
        for _ in request.filters])
