"""CreateAcls (30) v1-3: SECURITY_DISABLED for every ACL, as Kafka answers with no authorizer configured.

Kafka 4 forwards CreateAcls to the controller, whose AclApis.handleCreateAcls with `authorizer`
None answers CreateAclsRequest.getErrorResponse(SecurityDisabledException("No Authorizer is
configured.")): one result per creation, error code 54 and that message. As
CreateAclsRequest.validate does while the request is parsed, a creation with an UNKNOWN (0)
pattern type, resource type, permission type or operation closes the connection.
"""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import CreateAclsRequest, CreateAclsResponse
from .acl_common import NO_AUTHORIZER, refuse_unknown_elements
from .context import RequestContext

API_KEY = 30
MIN_VERSION, MAX_VERSION = 1, 3  # v0 went in Kafka 4.0 (KIP-896)

_Result = CreateAclsResponse.AclCreationResult


def handle(request: CreateAclsRequest, ctx: RequestContext) -> CreateAclsResponse:
    refuse_unknown_elements(
        API_KEY, ctx.api_version,
        (code for c in request.creations
         for code in (c.resource_pattern_type, c.resource_type, c.permission_type, c.operation)),
        f"CreatableAcls contain unknown elements: {request.creations}")
    return CreateAclsResponse(throttle_time_ms=0, results=[
        _Result(error_code=ErrorCode.SECURITY_DISABLED, error_message=NO_AUTHORIZER) for _ in request.creations])
