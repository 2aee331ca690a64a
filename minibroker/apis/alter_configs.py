"""AlterConfigs (33): replace a resource's whole set of dynamic configs."""

from __future__ import annotations

from typing import Any

from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import AlterConfigsRequest, AlterConfigsResponse
from . import config_resources
from .context import RequestContext

API_KEY = 33
MIN_VERSION, MAX_VERSION = 0, 2

_Response = AlterConfigsResponse.AlterConfigsResourceResponse


def handle(request: AlterConfigsRequest, ctx: RequestContext) -> AlterConfigsResponse:
    responses = []
    for resource in request.resources:
        try:
            _alter(resource, request.validate_only, ctx)
            responses.append(_Response(error_code=0, error_message=None, resource_type=resource.resource_type,
                                       resource_name=resource.resource_name))
        except KafkaError as exc:
            responses.append(_Response(error_code=exc.code, error_message=exc.message,
                                       resource_type=resource.resource_type, resource_name=resource.resource_name))
    return AlterConfigsResponse(throttle_time_ms=0, responses=responses)


def _alter(resource: Any, validate_only: bool, ctx: RequestContext) -> None:
    cluster = ctx.cluster
    raw = {config.name: config.value for config in resource.configs}
    if resource.resource_type == config_resources.TOPIC:
        topic = config_resources.resolve_topic(cluster, resource.resource_name)
        overrides = cluster.config.parse_topic_configs(raw)
        if not validate_only:
            topic.configs = overrides
    elif resource.resource_type == config_resources.BROKER:
        node_level = config_resources.broker_is_node_level(cluster, ctx.node.node_id, resource.resource_name)
        parsed = {}
        for name, value in raw.items():
            definition = cluster.config.broker_def(name)
            if not definition.dynamic:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Cannot update these configs dynamically: {{{name}}}")
            if value is not None:
                parsed[name] = definition.parse(value)
        if not validate_only:
            layer = cluster.config.dynamic_node if node_level else cluster.config.dynamic_default
            layer.clear()
            layer.update(parsed)
    elif resource.resource_type == config_resources.BROKER_LOGGER:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "AlterConfigs does not support BROKER_LOGGER resources")
    else:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type {resource.resource_type}")


