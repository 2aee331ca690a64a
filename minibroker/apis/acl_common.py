"""What the three ACL APIs share: no authorizer, and the request checks Kafka makes while parsing."""

from __future__ import annotations

from collections.abc import Iterable

from ..protocol.messages import request_parse_error
from .context import CloseConnection

# AclApis/ControllerApis with no `authorizer.class.name`: the message of the SecurityDisabledException
# CreateAcls and DeleteAcls answer with, and the one DescribeAcls sets itself.
NO_AUTHORIZER = "No Authorizer is configured."
NO_AUTHORIZER_ON_BROKER = "No Authorizer is configured on the broker"

UNKNOWN = 0  # ResourceType/PatternType/AclOperation/AclPermissionType.UNKNOWN


def refuse_unknown_elements(api_key: int, api_version: int, codes: Iterable[int], what: str) -> None:
    """CloseConnection when a filter or binding holds an UNKNOWN (0) code, as the request's constructor
    throws while Kafka parses it (CreateAclsRequest.validate, Describe/DeleteAclsRequest.normalizeAndValidate)."""
    if any(code == UNKNOWN for code in codes):
        raise CloseConnection(request_parse_error(api_key, api_version, f"IllegalArgumentException: {what}"))
