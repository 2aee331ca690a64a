"""What the three ACL APIs share: the request checks Kafka makes while parsing, the cluster authorization and
authorizer check before any filter or creation is looked at, and bindings from the wire."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from ..core.acls import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    StandardAuthorizer,
    from_code,
)
from ..protocol.errors import ErrorCode
from ..protocol.messages import request_parse_error
from .context import CloseConnection, RequestContext

# AclApis with no `authorizer.class.name`: the message of the SecurityDisabledException CreateAcls and
# DeleteAcls answer with, and the one DescribeAcls sets itself.
NO_AUTHORIZER = "No Authorizer is configured."
NO_AUTHORIZER_ON_BROKER = "No Authorizer is configured on the broker"


class Refusal(NamedTuple):
    """The one error an ACL API answers every filter or creation with."""

    code: ErrorCode
    message: str | None


def authorizer_or_refusal(ctx: RequestContext, operation: AclOperation,
                          no_authorizer: str) -> StandardAuthorizer | Refusal:
    """The authorizer an ACL API works on, or why it refuses the whole request first, as AclApis does:
    CLUSTER_AUTHORIZATION_FAILED without `operation` on the cluster, then SECURITY_DISABLED with the API's
    `no_authorizer` message when no `authorizer.class.name` is set."""
    if not ctx.authorize_cluster(operation):
        return Refusal(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    if ctx.cluster.authorizer is None:
        return Refusal(ErrorCode.SECURITY_DISABLED, no_authorizer)
    return ctx.cluster.authorizer


def refuse_unknown_elements(api_key: int, api_version: int, elements: Iterable[tuple[int, int, int, int]],
                            what: str, zero_only: bool = False) -> None:
    """CloseConnection when a filter or binding holds a code Kafka reads as UNKNOWN (0, or one it does not know;
    with `zero_only`, 0 only: CreateAcls, where Kafka 4.3.1 answers other unknown codes), as the request's
    constructor throws while Kafka parses it (CreateAclsRequest.validate,
    Describe/DeleteAclsRequest.normalizeAndValidate). Each element is (resource type, pattern type, operation,
    permission type)."""
    for resource_type, pattern_type, operation, permission in elements:
        codes: tuple[int, ...] = (resource_type, pattern_type, operation, permission)
        if not zero_only:
            codes = (from_code(ResourceType, resource_type), from_code(PatternType, pattern_type),
                     from_code(AclOperation, operation), from_code(AclPermissionType, permission))
        if any(code == 0 for code in codes):
            raise CloseConnection(request_parse_error(api_key, api_version, f"IllegalArgumentException: {what}"))


def binding_of(creation: Any) -> AclBinding:
    """The AclBinding of a CreateAcls creation (CreateAclsRequest.aclBinding): a code Kafka does not know is UNKNOWN."""
    return AclBinding(from_code(ResourceType, creation.resource_type), creation.resource_name,
                      from_code(PatternType, creation.resource_pattern_type), creation.principal, creation.host,
                      from_code(AclOperation, creation.operation),
                      from_code(AclPermissionType, creation.permission_type))


def filter_of(source: Any) -> AclBindingFilter:
    """The AclBindingFilter of a DescribeAcls request or a DeleteAcls filter."""
    return AclBindingFilter(ResourceType(source.resource_type_filter), source.resource_name_filter,
                            PatternType(source.pattern_type_filter), source.principal_filter, source.host_filter,
                            AclOperation(source.operation), AclPermissionType(source.permission_type))
