"""CreateAcls (30): add ACLs to the cluster's authorizer, as KRaft Kafka does.

Versions 1-3, and v0 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0): v1 adds the
resource pattern type (v0 reads every creation as LITERAL); v2 is flexible; v3 adds the USER resource type.
Mirrors AclApis.handleCreateAcls and AclControlManager on the controller, to which Kafka 4 forwards CreateAcls.

It needs ALTER on the cluster (else every creation gets CLUSTER_AUTHORIZATION_FAILED); with no
`authorizer.class.name` every creation gets SECURITY_DISABLED ("No Authorizer is configured."). A creation with
ANY (or a MATCH pattern) anywhere in the request fails them all with UNKNOWN_SERVER_ERROR and no message, and
none is added: Kafka's ResourcePattern and AccessControlEntry refuse those values while the request's bindings
are built (IllegalArgumentException). Otherwise each creation is checked on its own (AclApis: the CLUSTER
resource's only name, a non-empty name; AclControlManager.validateNewAcl: concrete resource type, LITERAL or
PREFIXED, a concrete operation and permission; a `Type:name` principal): a refused one gets INVALID_REQUEST
with Kafka's message and the others are still added. Adding an ACL that exists succeeds and changes nothing; a
success's message is "". As CreateAclsRequest.validate does while the request is parsed, a creation with a 0
(UNKNOWN) code closes the connection; a code Kafka does not know is read as UNKNOWN and refused by
validateNewAcl ("Invalid resourceType UNKNOWN"), as Kafka 4.3.1 answers it.
"""

from __future__ import annotations

from ..core.acls import (
    AclBinding,
    AclError,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    validate_new_acl,
)
from ..protocol.errors import ErrorCode
from ..protocol.messages import CreateAclsRequest, CreateAclsResponse
from .acl_common import NO_AUTHORIZER, Refusal, authorizer_or_refusal, binding_of, refuse_unknown_elements
from .context import RequestContext

API_KEY = 30
MIN_VERSION, MAX_VERSION = 1, 3  # v0 went in Kafka 4.0 (KIP-896)
PRE_KIP896_MIN_VERSION = 0  # releases before 4.0 served v0

_Result = CreateAclsResponse.AclCreationResult


def handle(request: CreateAclsRequest, ctx: RequestContext) -> CreateAclsResponse:
    refuse_unknown_elements(
        API_KEY, ctx.api_version,
        ((c.resource_type, c.resource_pattern_type, c.operation, c.permission_type) for c in request.creations),
        f"CreatableAcls contain unknown elements: {request.creations}", zero_only=True)
    authorizer = authorizer_or_refusal(ctx, AclOperation.ALTER, NO_AUTHORIZER)
    if isinstance(authorizer, Refusal):
        return _every(request, *authorizer)
    bindings = [binding_of(creation) for creation in request.creations]
    if any(_not_concrete(acl) for acl in bindings):
        return _every(request, ErrorCode.UNKNOWN_SERVER_ERROR, None)
    results = []
    for acl in bindings:
        try:
            validate_new_acl(acl)
        except AclError as exc:
            results.append(_Result(error_code=ErrorCode.INVALID_REQUEST, error_message=str(exc)))
            continue
        authorizer.add(acl)
        results.append(_Result(error_code=0, error_message=""))
    return CreateAclsResponse(throttle_time_ms=0, results=results)


def _not_concrete(acl: AclBinding) -> bool:
    """A value Kafka's ResourcePattern or AccessControlEntry constructor refuses (ANY, or a MATCH pattern)."""
    return (acl.resource_type == ResourceType.ANY or acl.pattern_type in (PatternType.ANY, PatternType.MATCH)
            or acl.operation == AclOperation.ANY or acl.permission_type == AclPermissionType.ANY)


def _every(request: CreateAclsRequest, code: ErrorCode, message: str | None) -> CreateAclsResponse:
    """CreateAclsRequest.getErrorResponse: one result per creation, all with `code`."""
    return CreateAclsResponse(throttle_time_ms=0, results=[
        _Result(error_code=code, error_message=message) for _ in request.creations])
