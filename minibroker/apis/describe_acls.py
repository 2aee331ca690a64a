"""DescribeAcls (29) v1-3: SECURITY_DISABLED, as Kafka answers with no authorizer configured.

Mirrors AclApis.handleDescribeAcls with `authorizer` None: error code 54 and the message "No
Authorizer is configured on the broker", no resources. As DescribeAclsRequest.normalizeAndValidate
does while the request is parsed, a filter with an UNKNOWN (0) resource type, pattern type,
operation or permission type closes the connection.
"""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import DescribeAclsRequest, DescribeAclsResponse
from .acl_common import NO_AUTHORIZER_ON_BROKER, refuse_unknown_elements
from .context import RequestContext

API_KEY = 29
MIN_VERSION, MAX_VERSION = 1, 3  # v0 went in Kafka 4.0 (KIP-896)


def handle(request: DescribeAclsRequest, ctx: RequestContext) -> DescribeAclsResponse:
    refuse_unknown_elements(
        API_KEY, ctx.api_version,
        (request.pattern_type_filter, request.resource_type_filter, request.permission_type, request.operation),
        f"DescribeAclsRequest contains UNKNOWN elements: {request}")
    return DescribeAclsResponse(throttle_time_ms=0, error_code=ErrorCode.SECURITY_DISABLED,
                                error_message=NO_AUTHORIZER_ON_BROKER, resources=[])
