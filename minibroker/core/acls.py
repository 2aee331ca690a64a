"""ACLs and the decision Kafka's StandardAuthorizer makes with them.

Pure data, no I/O. The ACLs are cluster metadata, as in KRaft (AclControlManager keeps them, every
broker's StandardAuthorizer reads them), so one `StandardAuthorizer` serves every node of a cluster.

The decision (StandardAuthorizerData.authorize):

* a principal listed in `super.users` may do anything;
* otherwise the ACLs whose resource pattern matches the resource count: LITERAL with the same name,
  LITERAL `*`, PREFIXED with a prefix of the name. Of those, an ACL applies when its principal is the
  caller's or `User:*`, its host the caller's address or `*`, and its operation ALL, the operation
  itself, or (ALLOW ACLs only) an operation that implies it: READ, WRITE, DELETE and ALTER imply
  DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS;
* any applying DENY denies; else any applying ALLOW allows; else, when no ACL at all matched the
  resource, `allow.everyone.if.no.acl.found` decides; else denied.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import TypeVar

CLUSTER_NAME = "kafka-cluster"  # the one name of the CLUSTER resource (Resource.CLUSTER_NAME)
WILDCARD_RESOURCE = "*"  # ResourcePattern.WILDCARD_RESOURCE
WILDCARD_PRINCIPAL = "User:*"
WILDCARD_HOST = "*"
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


class ResourceType(IntEnum):
    """org.apache.kafka.common.resource.ResourceType codes."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    """org.apache.kafka.common.resource.PatternType codes (ANY and MATCH exist only in filters)."""

    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    """org.apache.kafka.common.acl.AclOperation codes."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(IntEnum):
    """org.apache.kafka.common.acl.AclPermissionType codes."""

    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


_Op = AclOperation
_E = TypeVar("_E", ResourceType, PatternType, AclOperation, AclPermissionType)
# AclEntry.supportedOperations: what the authorized-operation fields of Metadata, DescribeCluster,
# DescribeGroups and DescribeTopicPartitions are computed over
SUPPORTED_OPERATIONS: dict[ResourceType, frozenset[AclOperation]] = {
    ResourceType.TOPIC: frozenset({_Op.READ, _Op.WRITE, _Op.CREATE, _Op.DESCRIBE, _Op.DELETE, _Op.ALTER,
                                   _Op.DESCRIBE_CONFIGS, _Op.ALTER_CONFIGS}),
    ResourceType.GROUP: frozenset({_Op.READ, _Op.DESCRIBE, _Op.DELETE, _Op.DESCRIBE_CONFIGS, _Op.ALTER_CONFIGS}),
    ResourceType.CLUSTER: frozenset({_Op.CREATE, _Op.CLUSTER_ACTION, _Op.DESCRIBE_CONFIGS, _Op.ALTER_CONFIGS,
                                     _Op.IDEMPOTENT_WRITE, _Op.ALTER, _Op.DESCRIBE}),
    ResourceType.TRANSACTIONAL_ID: frozenset({_Op.DESCRIBE, _Op.WRITE, _Op.TWO_PHASE_COMMIT}),
    ResourceType.DELEGATION_TOKEN: frozenset({_Op.DESCRIBE}),
    ResourceType.USER: frozenset({_Op.CREATE_TOKENS, _Op.DESCRIBE_TOKENS}),
}

# Operations an ALLOW ACL grants beyond its own (StandardAuthorizerData.IMPLIES_DESCRIBE and _CONFIGS)
_IMPLIED_BY = {
    _Op.DESCRIBE: frozenset({_Op.DESCRIBE, _Op.READ, _Op.WRITE, _Op.DELETE, _Op.ALTER}),
    _Op.DESCRIBE_CONFIGS: frozenset({_Op.DESCRIBE_CONFIGS, _Op.ALTER_CONFIGS}),
}


def from_code(enum: type[_E], code: int) -> _E:
    """The member with `code`, UNKNOWN for a code this release does not know (as Kafka's fromCode)."""
    try:
        return enum(code)
    except ValueError:
        return enum(0)


class AclError(ValueError):
    """An ACL or filter Kafka refuses with INVALID_REQUEST; the message is Kafka's."""


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: a resource pattern and an access control entry (Kafka's AclBinding)."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def matches_resource(self, resource_type: ResourceType, name: str) -> bool:
        """Whether this ACL's pattern covers resource `name` of `resource_type`."""
        if self.resource_type != resource_type:
            return False
        if self.pattern_type == PatternType.PREFIXED:
            return name.startswith(self.resource_name)
        return self.resource_name in (name, WILDCARD_RESOURCE)

    def verdict(self, principals: tuple[str, str], host: str, operation: AclOperation) -> AclPermissionType | None:
        """ALLOW or DENY when this ACL applies to the caller and operation, else None (findResult)."""
        if self.principal not in principals or self.host not in (WILDCARD_HOST, host):
            return None
        if self.operation != _Op.ALL and self.operation != operation:
            implied = _IMPLIED_BY.get(operation)
            if self.permission_type != AclPermissionType.ALLOW or implied is None or self.operation not in implied:
                return None
        return self.permission_type


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    """What DescribeAcls and DeleteAcls select by: None (or ANY) matches everything in that field."""

    resource_type: ResourceType
    resource_name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def matches(self, acl: AclBinding) -> bool:
        """ResourcePatternFilter.matches and AccessControlEntryFilter.matches together."""
        if self.resource_type != ResourceType.ANY and self.resource_type != acl.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, acl.pattern_type):
            return False
        if self.resource_name is not None:
            if self.pattern_type in (PatternType.ANY, acl.pattern_type):
                if self.resource_name != acl.resource_name:
                    return False
            elif acl.pattern_type == PatternType.PREFIXED:  # MATCH: every ACL that would cover this name
                if not self.resource_name.startswith(acl.resource_name):
                    return False
            elif acl.resource_name not in (self.resource_name, WILDCARD_RESOURCE):
                return False
        if self.principal is not None and self.principal != acl.principal:
            return False
        if self.host is not None and self.host != acl.host:
            return False
        if self.operation != _Op.ANY and self.operation != acl.operation:
            return False
        return self.permission_type in (AclPermissionType.ANY, acl.permission_type)

    def resource_pattern(self) -> tuple[ResourceType, str, PatternType] | None:
        """The one resource pattern this filter can match, when it names one (a type, a name, LITERAL or PREFIXED)."""
        if (self.resource_type == ResourceType.ANY or self.resource_name is None
                or self.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED)):
            return None
        return self.resource_type, self.resource_name, self.pattern_type

    def binding(self) -> AclBinding | None:
        """The one ACL this filter can match, when it names every field (nothing ANY, null or MATCH)."""
        pattern = self.resource_pattern()
        if (pattern is None or self.principal is None or self.host is None or self.operation == _Op.ANY
                or self.permission_type == AclPermissionType.ANY):
            return None
        return AclBinding(*pattern, self.principal, self.host, self.operation, self.permission_type)


def parse_principal(text: str) -> tuple[str, str]:
    """(type, name) of `Type:name` (SecurityUtils.parseKafkaPrincipal)."""
    kind, sep, name = text.partition(":")
    if not sep or not kind:
        raise AclError(f"expected a string in format principalType:principalName but got {text}")
    return kind, name


def validate_new_acl(acl: AclBinding) -> None:
    """The checks AclApis.handleCreateAcls and AclControlManager.validateNewAcl make, in their order."""
    if acl.resource_type == ResourceType.CLUSTER and acl.resource_name != CLUSTER_NAME:
        raise AclError(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if acl.resource_name == "":
        raise AclError("Invalid empty resource name")
    if acl.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise AclError(f"Invalid resourceType {acl.resource_type.name}")
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise AclError(f"Invalid patternType {acl.pattern_type.name}")
    if acl.operation in (_Op.UNKNOWN, _Op.ANY):
        raise AclError(f"Invalid operation {acl.operation.name}")
    if acl.permission_type not in (AclPermissionType.DENY, AclPermissionType.ALLOW):
        raise AclError(f"Invalid permissionType {acl.permission_type.name}")
    if ":" not in acl.principal:  # Kafka's message here is KafkaPrincipal parsing's, not SecurityUtils'
        raise AclError(f"Could not parse principal from `{acl.principal}` (no colon is present separating the "
                       "principal type from the principal name)")
    parse_principal(acl.principal)


def parse_super_users(value: str | None) -> frozenset[str]:
    """`super.users`: principals separated by semicolons (StandardAuthorizer.getConfiguredSuperUsers)."""
    users = [item.strip() for item in (value or "").split(";")]
    for user in users:
        if user:
            parse_principal(user)
    return frozenset(user for user in users if user)


class StandardAuthorizer:
    """The ACLs of a cluster and the answers Kafka's StandardAuthorizer gives from them."""

    def __init__(self, super_users: frozenset[str] = frozenset(), allow_if_no_acl_found: bool = False) -> None:
        self.super_users = super_users
        self.allow_if_no_acl_found = allow_if_no_acl_found
        self._acls: dict[AclBinding, None] = {}  # in creation order, no duplicates (AclControlManager.existingAcls)
        # indexes, each in creation order too: every ACL by its resource pattern (the decision's LITERAL
        # lookups and the filters that name a pattern), and the PREFIXED ACLs by type
        self._by_pattern: dict[tuple[ResourceType, str, PatternType], dict[AclBinding, None]] = {}
        self._prefixed: dict[ResourceType, dict[AclBinding, None]] = {}

    def __len__(self) -> int:
        return len(self._acls)

    def __iter__(self) -> Iterator[AclBinding]:
        return iter(list(self._acls))

    # -- changes (AclControlManager) ------------------------------------------------------------------------

    def add(self, acl: AclBinding) -> None:
        """Keep `acl` (already validated); adding one that exists changes nothing."""
        if acl in self._acls:
            return
        self._acls[acl] = None
        self._by_pattern.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), {})[acl] = None
        if acl.pattern_type == PatternType.PREFIXED:
            self._prefixed.setdefault(acl.resource_type, {})[acl] = None

    def remove(self, acl: AclBinding) -> None:
        """Forget `acl`; one already gone changes nothing."""
        if acl not in self._acls:
            return
        del self._acls[acl]
        pattern = (acl.resource_type, acl.resource_name, acl.pattern_type)
        del self._by_pattern[pattern][acl]
        if not self._by_pattern[pattern]:
            del self._by_pattern[pattern]
        if acl.pattern_type == PatternType.PREFIXED:
            del self._prefixed[acl.resource_type][acl]

    def acls(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        """The ACLs `acl_filter` matches, in creation order."""
        # a filter naming an ACL or a resource pattern looks there only, so that many such filters (a DeleteAcls
        # of many bindings) cost what they name rather than every ACL each
        binding = acl_filter.binding()
        if binding is not None:
            return [binding] if binding in self._acls else []
        pattern = acl_filter.resource_pattern()
        candidates = self._acls if pattern is None else self._by_pattern.get(pattern, {})
        return [acl for acl in candidates if acl_filter.matches(acl)]

    # -- decisions (StandardAuthorizerData) -----------------------------------------------------------------

    def _covering(self, resource_type: ResourceType, name: str) -> Iterator[AclBinding]:
        yield from self._by_pattern.get((resource_type, name, PatternType.LITERAL), ())
        if name != WILDCARD_RESOURCE:
            yield from self._by_pattern.get((resource_type, WILDCARD_RESOURCE, PatternType.LITERAL), ())
        for acl in self._prefixed.get(resource_type, ()):
            if name.startswith(acl.resource_name):
                yield acl

    def authorize(self, principal: str, host: str, operation: AclOperation,
                  resource_type: ResourceType, name: str) -> bool:
        """Whether `principal` connecting from `host` may perform `operation` on the resource."""
        if principal in self.super_users:
            return True
        principals = (principal, WILDCARD_PRINCIPAL)
        found = allowed = False
        for acl in self._covering(resource_type, name):
            found = True
            verdict = acl.verdict(principals, host, operation)
            if verdict == AclPermissionType.DENY:
                return False
            allowed = allowed or verdict == AclPermissionType.ALLOW
        return allowed or (not found and self.allow_if_no_acl_found)

    def authorize_by_resource_type(self, principal: str, host: str, operation: AclOperation,
                                   resource_type: ResourceType) -> bool:
        """Whether some resource of `resource_type` may be the object of `operation` (Authorizer's default
        authorizeByResourceType: an applying ALLOW not dominated by a DENY; implied operations do not count)."""
        if self.authorize(principal, host, operation, resource_type, "hardcode"):
            return True
        principals = (principal, WILDCARD_PRINCIPAL)
        denied_literal: set[str] = set()
        denied_prefix: set[str] = set()
        allowed: list[AclBinding] = []
        for acl in self._acls:
            if (acl.resource_type != resource_type or acl.principal not in principals
                    or acl.host not in (WILDCARD_HOST, host) or acl.operation not in (operation, _Op.ALL)):
                continue
            literal = acl.pattern_type == PatternType.LITERAL
            if acl.permission_type == AclPermissionType.DENY:
                if (literal and acl.resource_name == WILDCARD_RESOURCE) or (not literal and not acl.resource_name):
                    return False
                (denied_literal if literal else denied_prefix).add(acl.resource_name)
            elif acl.permission_type == AclPermissionType.ALLOW:
                if literal and acl.resource_name == WILDCARD_RESOURCE:
                    return True
                allowed.append(acl)
        for acl in allowed:
            name = acl.resource_name
            if acl.pattern_type == PatternType.LITERAL and name in denied_literal:
                continue
            if not any(name[:end] in denied_prefix for end in range(1, len(name) + 1)):
                return True
        return False

    def authorized_operations(self, principal: str, host: str, resource_type: ResourceType,
                              name: str) -> frozenset[AclOperation]:
        """The operations of SUPPORTED_OPERATIONS[resource_type] the caller may perform on the resource."""
        return frozenset(op for op in SUPPORTED_OPERATIONS[resource_type]
                         if self.authorize(principal, host, op, resource_type, name))


def group_by_resource(acls: Iterable[AclBinding]) -> dict[tuple[ResourceType, str, PatternType], list[AclBinding]]:
    """ACLs grouped by resource pattern, first-seen order (DescribeAclsResponse.aclsResources)."""
    groups: dict[tuple[ResourceType, str, PatternType], list[AclBinding]] = {}
    for acl in acls:
        groups.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), []).append(acl)
    return groups
