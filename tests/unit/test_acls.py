"""StandardAuthorizer's decision and ACL filters, as Kafka's StandardAuthorizerData and AclBindingFilter have them."""

from __future__ import annotations

import pytest

from minibroker.core.acls import (
    AclBinding,
    AclBindingFilter,
    AclError,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    StandardAuthorizer,
    parse_super_users,
    validate_new_acl,
)
from minibroker.core.config import BrokerConfig, ConfigError

Op, Type, Pattern, Perm = AclOperation, ResourceType, PatternType, AclPermissionType
HOST = "127.0.0.1"


def acl(principal: str = "User:alice", operation: AclOperation = Op.READ, name: str = "orders",
        pattern: PatternType = Pattern.LITERAL, permission: AclPermissionType = Perm.ALLOW,
        resource_type: ResourceType = Type.TOPIC, host: str = "*") -> AclBinding:
    return AclBinding(resource_type, name, pattern, principal, host, operation, permission)


def authorizer(*acls: AclBinding, allow_if_no_acl: bool = False, super_users: str = "") -> StandardAuthorizer:
    a = StandardAuthorizer(parse_super_users(super_users), allow_if_no_acl)
    for binding in acls:
        a.add(binding)
    return a


def may(a: StandardAuthorizer, operation: AclOperation, name: str = "orders", principal: str = "User:alice",
        host: str = HOST, resource_type: ResourceType = Type.TOPIC) -> bool:
    return a.authorize(principal, host, operation, resource_type, name)


def test_no_acl_denies_unless_allow_everyone_if_no_acl_found() -> None:
    assert not may(authorizer(), Op.READ)
    assert may(authorizer(allow_if_no_acl=True), Op.READ)


def test_an_acl_on_the_resource_for_someone_else_turns_the_default_into_deny() -> None:
    a = authorizer(acl("User:bob"), allow_if_no_acl=True)
    assert not may(a, Op.READ)  # the resource has ACLs, none for alice
    assert may(a, Op.READ, name="other")  # no ACL on this one: the default


def test_literal_wildcard_and_prefixed_patterns_cover_their_names() -> None:
    a = authorizer(acl(name="orders"), acl(operation=Op.WRITE, name="*"),
                   acl(operation=Op.DELETE, name="ord", pattern=Pattern.PREFIXED))
    assert may(a, Op.READ, "orders") and not may(a, Op.READ, "orders2")
    assert may(a, Op.WRITE, "anything")
    assert may(a, Op.DELETE, "ord") and may(a, Op.DELETE, "orders-eu") and not may(a, Op.DELETE, "or")


def test_deny_wins_over_allow_whatever_the_pattern() -> None:
    a = authorizer(acl(operation=Op.ALL, name="*"),
                   acl(operation=Op.WRITE, name="orders-", pattern=Pattern.PREFIXED, permission=Perm.DENY))
    assert may(a, Op.WRITE, "payments")
    assert not may(a, Op.WRITE, "orders-eu")
    assert may(a, Op.READ, "orders-eu")


def test_allow_of_read_write_delete_alter_implies_describe_but_deny_of_them_does_not() -> None:
    for operation in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER):
        assert may(authorizer(acl(operation=operation)), Op.DESCRIBE)
    assert not may(authorizer(acl(operation=Op.CREATE)), Op.DESCRIBE)
    assert may(authorizer(acl(operation=Op.ALTER_CONFIGS)), Op.DESCRIBE_CONFIGS)
    denied_read = authorizer(acl(operation=Op.ALL), acl(operation=Op.READ, permission=Perm.DENY))
    assert may(denied_read, Op.DESCRIBE) and not may(denied_read, Op.READ)
    assert not may(authorizer(acl(operation=Op.ALL), acl(operation=Op.ALL, permission=Perm.DENY)), Op.DESCRIBE)


def test_principal_and_host_must_match_or_be_wildcards() -> None:
    a = authorizer(acl("User:*", Op.READ), acl("User:alice", Op.WRITE, host="10.0.0.1"))
    assert may(a, Op.READ, principal="User:anyone")
    assert not may(a, Op.WRITE) and may(a, Op.WRITE, host="10.0.0.1")


def test_super_users_may_do_anything_even_against_a_deny() -> None:
    a = authorizer(acl("User:root", Op.ALL, permission=Perm.DENY), super_users="User:root; User:ops")
    assert may(a, Op.WRITE, principal="User:root") and may(a, Op.ALTER, principal="User:ops", name="x")


def test_authorize_by_resource_type_needs_an_undominated_allow() -> None:
    assert not authorizer().authorize_by_resource_type("User:alice", HOST, Op.WRITE, Type.TOPIC)
    allow_one = authorizer(acl(operation=Op.WRITE, name="orders"))
    assert allow_one.authorize_by_resource_type("User:alice", HOST, Op.WRITE, Type.TOPIC)
    dominated = authorizer(acl(operation=Op.WRITE, name="orders"),
                           acl(operation=Op.WRITE, name="ord", pattern=Pattern.PREFIXED, permission=Perm.DENY))
    assert not dominated.authorize_by_resource_type("User:alice", HOST, Op.WRITE, Type.TOPIC)
    wildcard_deny = authorizer(acl(operation=Op.WRITE, name="x"), acl(operation=Op.WRITE, name="*",
                                                                        permission=Perm.DENY))
    assert not wildcard_deny.authorize_by_resource_type("User:alice", HOST, Op.WRITE, Type.TOPIC)
    # implied operations do not count here
    assert not authorizer(acl(operation=Op.READ)).authorize_by_resource_type("User:alice", HOST, Op.DESCRIBE,
                                                                             Type.TOPIC)


def test_filters_match_as_kafka_acl_binding_filters_do() -> None:
    literal, wildcard, prefixed = acl(name="orders"), acl(name="*"), acl(name="ord", pattern=Pattern.PREFIXED)
    a = authorizer(literal, wildcard, prefixed, acl("User:bob", Op.WRITE, name="payments"))

    def select(name: str | None, pattern: PatternType, principal: str | None = None) -> list[AclBinding]:
        return a.acls(AclBindingFilter(Type.ANY, name, pattern, principal, None, Op.ANY, Perm.ANY))

    assert select("orders", Pattern.MATCH) == [literal, wildcard, prefixed]
    assert select("orders", Pattern.ANY) == [literal]
    assert select("ord", Pattern.PREFIXED) == [prefixed]
    assert select(None, Pattern.LITERAL) == [literal, wildcard, a.acls(AclBindingFilter(
        Type.ANY, "payments", Pattern.ANY, None, None, Op.ANY, Perm.ANY))[0]]
    assert [b.principal for b in select(None, Pattern.ANY, "User:bob")] == ["User:bob"]


def test_removing_an_acl_takes_it_out_of_decisions() -> None:
    binding = acl()
    a = authorizer(binding, binding)
    assert len(a) == 1 and may(a, Op.READ)
    a.remove(binding)
    assert len(a) == 0 and not may(a, Op.READ)


@pytest.mark.parametrize(("binding", "message"), [
    (acl(resource_type=Type.CLUSTER, name="x"), "The only valid name for the CLUSTER resource is kafka-cluster"),
    (acl(name=""), "Invalid empty resource name"),
    (acl(resource_type=Type.ANY), "Invalid resourceType ANY"),
    (acl(pattern=Pattern.MATCH), "Invalid patternType MATCH"),
    (acl(operation=Op.ANY), "Invalid operation ANY"),
    (acl(permission=Perm.ANY), "Invalid permissionType ANY"),
    (acl(principal="alice"), "Could not parse principal from `alice` \\(no colon is present separating the principal "
                             "type from the principal name\\)"),
])
def test_new_acls_are_validated_with_kafkas_messages(binding: AclBinding, message: str) -> None:
    with pytest.raises(AclError, match=message):
        validate_new_acl(binding)


def test_authorizer_configs_are_checked_at_start_up() -> None:
    with pytest.raises(ConfigError, match="implements only org.apache.kafka.metadata.authorizer.StandardAuthorizer"):
        BrokerConfig({"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})
    with pytest.raises(ConfigError, match="super.users"):
        BrokerConfig({"super.users": "admin"})
    config = BrokerConfig({"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                           "super.users": "User:admin", "allow.everyone.if.no.acl.found": "true"})
    assert config["allow.everyone.if.no.acl.found"] is True
    assert "super.users" not in config.broker_names()  # not a KafkaConfig: DescribeConfigs does not list it
