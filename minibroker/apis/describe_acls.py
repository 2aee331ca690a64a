"""DescribeAcls (29): the ACLs a filter matches, grouped by resource pattern.

Versions 1-3, and v0 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0): v1 adds the
pattern type; v2 is flexible; v3 adds the USER resource type. v0 has no pattern type: Kafka reads it as
LITERAL, so a v0 filter matches only LITERAL patterns, and the answer, which cannot name a pattern type either,
holds only LITERAL ones. Mirrors AclApis.handleDescribeAcls.

Needs DESCRIBE on the cluster (else CLUSTER_AUTHORIZATION_FAILED, DescribeAclsRequest.getErrorResponse); with
no `authorizer.class.name`: SECURITY_DISABLED and "No Authorizer is configured on the broker". Filter semantics
are AclBindingFilter.matches (core/acls.py), MATCH included. As DescribeAclsRequest.normalizeAndValidate does
while the request is parsed, a filter with an UNKNOWN code closes the connection.
"""

from __future__ import annotations

from ..core.acls import AclOperation, group_by_resource
from ..protocol.errors import ErrorCode
from ..protocol.messages import DescribeAclsRequest, DescribeAclsResponse
from .acl_common import NO_AUTHORIZER_ON_BROKER, Refusal, authorizer_or_refusal, filter_of, refuse_unknown_elements
from .context import RequestContext

API_KEY = 29
MIN_VERSION, MAX_VERSION = 1, 3  # v0 went in Kafka 4.0 (KIP-896)
PRE_KIP896_MIN_VERSION = 0  # releases before 4.0 served v0

_Resource = DescribeAclsResponse.DescribeAclsResource
_Description = _Resource.AclDescription


def handle(request: DescribeAclsRequest, ctx: RequestContext) -> DescribeAclsResponse:
    refuse_unknown_elements(
        API_KEY, ctx.api_version,
        [(request.resource_type_filter, request.pattern_type_filter, request.operation, request.permission_type)],
        f"DescribeAclsRequest contains UNKNOWN elements: {request}")
    authorizer = authorizer_or_refusal(ctx, AclOperation.DESCRIBE, NO_AUTHORIZER_ON_BROKER)
    if isinstance(authorizer, Refusal):
        return _error(*authorizer)
    groups = group_by_resource(authorizer.acls(filter_of(request)))
    return DescribeAclsResponse(throttle_time_ms=0, error_code=0, error_message="", resources=[
        _Resource(resource_type=resource_type, resource_name=name, pattern_type=pattern_type, acls=[
            _Description(principal=acl.principal, host=acl.host, operation=acl.operation,
                         permission_type=acl.permission_type) for acl in acls])
        for (resource_type, name, pattern_type), acls in groups.items()])


def _error(code: ErrorCode, message: str | None) -> DescribeAclsResponse:
    return DescribeAclsResponse(throttle_time_ms=0, error_code=code, error_message=message, resources=[])
