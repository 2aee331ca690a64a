"""Shared by the config APIs: resource types, how a resource name resolves, the checks every resource of
AlterConfigs and IncrementalAlterConfigs goes through first (ConfigAdminManager.preprocess), who may
describe or alter a resource's configs, and how an altered resource is authorized and changed (alter_resource)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.cluster import Cluster
from ..core.cluster_model import Node, Topic, validate_topic_name
from ..core.config import Layer
from ..protocol.errors import ErrorCode, KafkaError
from .context import RequestContext
from .releases import release

TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8
CLIENT_METRICS = 16
GROUP = 32
# the ConfigResource.Type values Kafka 4 knows; any other id is ConfigResource.Type.UNKNOWN
KAFKA_TYPES = frozenset({TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP})
# ConfigResource.Type values Kafka serves and minibroker does not
_NOT_IMPLEMENTED = {CLIENT_METRICS: "CLIENT_METRICS", GROUP: "GROUP"}
# the refusal of each authorized type, with the error's default text as its message (Errors.message)
INVALID_REQUEST_MESSAGE = ("This most likely occurs because of a request being malformed by the client library or "
                           "the message was sent to an incompatible broker. See the broker logs for more details.")
_TOPIC_REFUSED = (ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.")
_GROUP_REFUSED = (ErrorCode.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.")
_CLUSTER_REFUSED = (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")


def authorization_error(ctx: RequestContext, operation: AclOperation, resource_type: int,
                        name: str) -> KafkaError | None:
    """The refusal when the caller may not DESCRIBE_CONFIGS or ALTER_CONFIGS a config resource, else None.

    As ConfigHelper.handleDescribeConfigsRequest and ControllerApis.authorizeAlterResource: a TOPIC or
    GROUP resource is authorized on itself, a BROKER or CLIENT_METRICS one on the cluster, and so is a
    BROKER_LOGGER one when described (IncrementalAlterConfigs authorizes altering one itself, AlterConfigs
    refuses the type); other types are not authorized here (they are refused for what they are).
    """
    if resource_type == TOPIC:
        allowed, refusal = ctx.authorize(operation, ResourceType.TOPIC, name), _TOPIC_REFUSED
    elif resource_type == GROUP:
        allowed, refusal = ctx.authorize(operation, ResourceType.GROUP, name), _GROUP_REFUSED
    elif resource_type in (BROKER, CLIENT_METRICS) or (
            resource_type == BROKER_LOGGER and operation == AclOperation.DESCRIBE_CONFIGS):
        allowed, refusal = ctx.authorize_cluster(operation), _CLUSTER_REFUSED
    else:
        return None
    return None if allowed else KafkaError(*refusal)


@dataclass(frozen=True)
class ConfigChange:
    """How one resource of an alter request changes configs, per resource type: AlterConfigs gives the whole new
    set, IncrementalAlterConfigs single operations. Each function validates (ConfigError) what it computes."""

    broker: Callable[[int | None, bool], None]  # alter node id's (None: the cluster default's) dynamic configs
    topic: Callable[[Mapping[str, Any]], dict[str, Any]]  # a topic's new overrides from its current ones
    group: Callable[[str], Layer]  # a group's new overrides


def alter_resource(ctx: RequestContext, resource: Any, validate_only: bool, change: ConfigChange) -> None:
    """Alter one resource as Kafka's controller does after ConfigAdminManager.preprocess: ALTER_CONFIGS
    (ControllerApis.authorizeAlterResource; the receiving broker validates a broker change even when the
    controller refuses it), then ConfigurationControlManager: a topic's new overrides are validated before the
    topic is looked up, a group that does not exist (yet) may have configs; other types are not served."""
    config = ctx.cluster.config
    resource_type, name = resource.resource_type, resource.resource_name
    refusal = authorization_error(ctx, AclOperation.ALTER_CONFIGS, resource_type, name)
    if refusal is not None:
        if resource_type == BROKER:
            change.broker(alter_broker_target(ctx.node, name), True)
        raise refusal
    if resource_type == TOPIC:
        validate_topic_name(name)
        current = ctx.cluster.topic(name)
        overrides = change.topic(current.configs if current is not None else {})
        topic = resolve_topic(ctx.cluster, name)
        if not validate_only:
            ctx.cluster.set_topic_configs(topic, overrides)
    elif resource_type == BROKER:
        change.broker(alter_broker_target(ctx.node, name), validate_only)
    elif resource_type == GROUP:
        group_target(ctx.node, name, altering=True)
        layer = change.group(name)
        if not validate_only:
            config.set_group_configs(name, layer)
    else:
        raise unserved_type(resource_type, f"Unknown resource type {resource_type}")


def resolve_topic(cluster: Cluster, name: str) -> Topic:
    """The topic named by a TOPIC resource; KafkaError if unknown."""
    topic = cluster.topic(name)
    if topic is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic '{name}' does not exist.")
    return topic


def group_target(node: Node, name: str, altering: bool) -> None:
    """KafkaError unless a GROUP resource names a group (ConfigHelper, ConfigAdminManager); a node speaking as a
    release before 4.0 refuses the type as minibroker always did (group configs are Kafka 4's, KIP-848)."""
    if not release(node.release).kip896:
        raise unserved_type(GROUP, "")
    if name == "":
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed." if altering
                         else "Group name must not be empty")


def _broker_id(name: str, what: str) -> int:
    try:
        return int(name)
    except ValueError:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"{what} must be an integer, but it is: {name}") from None


def describe_broker_target(node: Node, name: str) -> bool:
    """True for this node's BROKER resource ("<id>"), False for the cluster default (""); as ConfigHelper."""
    if name == "":
        return False
    if _broker_id(name, "Broker id") != node.node_id:
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Unexpected broker id, expected {node.node_id} or empty string, but received {name}")
    return True


def describe_logger_target(node: Node, name: str) -> None:
    """KafkaError unless a BROKER_LOGGER resource names this node (ConfigHelper)."""
    if name == "":
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
    if _broker_id(name, "Broker id") != node.node_id:
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Unexpected broker id, expected {node.node_id} but received {name}")


def alter_broker_target(node: Node, name: str) -> int | None:
    """The node a BROKER resource of an alter request names, None for the cluster default ("").

    ConfigAdminManager.validateResourceNameIsCurrentNodeId: only the receiving node's own id is accepted.
    """
    if name == "":
        return None
    if _broker_id(name, "Node id") != node.node_id:
        raise KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Unexpected broker id, expected {node.node_id}, but received {name}")
    return node.node_id


def node_static_configs(node: Node) -> dict[str, Any]:
    """What a Kafka node has in its server.properties and minibroker takes from its command line."""
    static: dict[str, Any] = {"node.id": node.node_id, "broker.id": node.node_id}
    if node.endpoints:
        listeners = [(e.listener, e.bind_host, e.bind_port) for e in node.endpoints]
        advertised = [(e.listener, e.host, e.port) for e in node.endpoints]
    else:
        bind = (node.bind_host or node.host, node.bind_port if node.bind_port is not None else node.port)
        listeners, advertised = [("PLAINTEXT", *bind)], [("PLAINTEXT", node.host, node.port)]
    static["listeners"] = ",".join(f"{name}://{host}:{port}" for name, host, port in listeners)
    if advertised != listeners:
        static["advertised.listeners"] = ",".join(f"{name}://{host}:{port}" for name, host, port in advertised)
    return static


def duplicate_resources(resources: Sequence[Any]) -> set[int]:
    """Indexes of resources that appear more than once: "Each resource must appear at most once."."""
    counts = Counter((r.resource_type, r.resource_name) for r in resources)
    return {i for i, r in enumerate(resources) if counts[(r.resource_type, r.resource_name)] > 1}


def alter_each(resources: Sequence[Any], alter: Callable[[Any], None], response_type: Any) -> list[Any]:
    """AlterConfigs' and IncrementalAlterConfigs' answers: each resource altered by `alter`, or refused with its
    KafkaError; a resource named twice is refused without being looked at."""
    duplicates = duplicate_resources(resources)
    responses = []
    for index, resource in enumerate(resources):
        try:
            if index in duplicates:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")
            alter(resource)
            code, message = ErrorCode.NONE, None
        except KafkaError as exc:
            code, message = exc.code, exc.message
        responses.append(response_type(error_code=code, error_message=message, resource_type=resource.resource_type,
                                       resource_name=resource.resource_name))
    return responses


def check_configs(configs: Iterable[Any], null_allowed: Any = lambda config: False) -> None:
    """ConfigAdminManager.preprocess: duplicate config keys, then null values, refused with INVALID_REQUEST."""
    configs = list(configs)
    names = [config.name for config in configs]
    if len(set(names)) != len(names):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    nulls = [config.name for config in configs if config.value is None and not null_allowed(config)]
    if nulls:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls))


def unserved_type(resource_type: int, unknown_message: str) -> KafkaError:
    """The refusal for a resource type the config APIs do not serve here."""
    if resource_type in _NOT_IMPLEMENTED:
        return KafkaError(ErrorCode.INVALID_CONFIG,
                          f"minibroker does not implement {_NOT_IMPLEMENTED[resource_type]} configs")
    return KafkaError(ErrorCode.INVALID_REQUEST, unknown_message)
