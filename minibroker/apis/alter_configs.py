"""AlterConfigs (33): replace a resource's whole set of dynamic configs.

Versions 0-2: v1 is v0 (the answer may come before throttling); v2 is flexible. Mirrors Kafka 4's path:
ConfigAdminManager.preprocess on the receiving broker (duplicates, null values, the broker id,
DynamicBrokerConfig's checks of broker configs), then on the controller ControllerApis.authorizeAlterResource
(ALTER_CONFIGS on a TOPIC or GROUP resource itself, on the cluster for BROKER and CLIENT_METRICS; a refused
resource changes nothing) and ConfigurationControlManager.legacyAlterConfigs (topic configs validated as
LogConfig.validate does, group configs as GroupConfig.validate does).

Every check and every change goes through the config registry (core/config.py).
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation
from ..core.cluster_model import validate_topic_name
from ..protocol.messages import AlterConfigsRequest, AlterConfigsResponse
from . import config_resources
from .context import RequestContext

API_KEY = 33
MIN_VERSION, MAX_VERSION = 0, 2

_Response = AlterConfigsResponse.AlterConfigsResourceResponse


def handle(request: AlterConfigsRequest, ctx: RequestContext) -> AlterConfigsResponse:
    responses = config_resources.alter_each(
        request.resources, lambda resource: _alter(resource, request.validate_only, ctx), _Response)
    return AlterConfigsResponse(throttle_time_ms=0, responses=responses)


def _alter(resource: Any, validate_only: bool, ctx: RequestContext) -> None:
    config = ctx.cluster.config
    config_resources.check_configs(resource.configs)
    raw = {c.name: c.value for c in resource.configs}
    refusal = config_resources.authorization_error(ctx, AclOperation.ALTER_CONFIGS, resource.resource_type,
                                                   resource.resource_name)
    if refusal is not None:
        if resource.resource_type == config_resources.BROKER:
            # the broker's preprocessing validates a broker config change before the controller authorizes it
            node_id = config_resources.alter_broker_target(ctx.node, resource.resource_name)
            config.alter_dynamic(node_id, raw, validate_only=True)
        raise refusal
    if resource.resource_type == config_resources.TOPIC:
        validate_topic_name(resource.resource_name)
        overrides = config.parse_topic_configs(raw)  # the whole new set, validated before the topic is looked up
        topic = config_resources.resolve_topic(ctx.cluster, resource.resource_name)
        if not validate_only:
            ctx.cluster.set_topic_configs(topic, overrides)
    elif resource.resource_type == config_resources.BROKER:
        node_id = config_resources.alter_broker_target(ctx.node, resource.resource_name)
        config.alter_dynamic(node_id, raw, validate_only)
    elif resource.resource_type == config_resources.GROUP:
        config_resources.group_target(ctx.node, resource.resource_name, altering=True)
        layer = config.parse_group_configs(raw)
        if not validate_only:
            config.set_group_configs(resource.resource_name, layer)
    else:  # AlterConfigs never served BROKER_LOGGER (KIP-412 added it to IncrementalAlterConfigs only)
        raise config_resources.unserved_type(resource.resource_type, f"Unknown resource type {resource.resource_type}")
