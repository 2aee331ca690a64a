"""IncrementalAlterConfigs (44): SET, DELETE, APPEND and SUBTRACT single configs."""

from __future__ import annotations

from typing import Any

from ..core.config import ConfigType
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse
from . import config_resources
from .context import RequestContext

API_KEY = 44
MIN_VERSION, MAX_VERSION = 0, 1

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3

_Response = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse


def handle(request: IncrementalAlterConfigsRequest, ctx: RequestContext) -> IncrementalAlterConfigsResponse:
    responses = []
    for resource in request.resources:
        try:
            _alter(resource, request.validate_only, ctx)
            responses.append(_Response(error_code=0, error_message=None, resource_type=resource.resource_type,
                                       resource_name=resource.resource_name))
        except KafkaError as exc:
            responses.append(_Response(error_code=exc.code, error_message=exc.message,
                                       resource_type=resource.resource_type, resource_name=resource.resource_name))
    return IncrementalAlterConfigsResponse(throttle_time_ms=0, responses=responses)


def _apply(current: dict[str, Any], ops: list[Any], lookup: Any, effective: Any) -> dict[str, Any]:
    """The new override map after applying `ops` in order; KafkaError on a bad op or value."""
    updated = dict(current)
    seen = set()
    for op in ops:
        if op.name in seen:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Error due to duplicate config keys: {op.name}")
        seen.add(op.name)
        definition = lookup(op.name)
        if op.config_operation == SET:
            if op.value is None:
                raise KafkaError(ErrorCode.INVALID_REQUEST, f"Null value not supported for: {op.name}")
            updated[op.name] = definition.parse(op.value)
        elif op.config_operation == DELETE:
            updated.pop(op.name, None)
        elif op.config_operation in (APPEND, SUBTRACT):
            if definition.type is not ConfigType.LIST:
                verb = "append" if op.config_operation == APPEND else "subtract"
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Config value {verb} is not allowed for config key: "
                                                           f"{op.name}")
            base = list(updated.get(op.name, effective(op.name)))
            items = definition.parse(op.value or "")
            if op.config_operation == APPEND:
                base += [item for item in items if item not in base]
            else:
                base = [item for item in base if item not in items]
            updated[op.name] = definition.parse(",".join(base)) if base else []
        else:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown config operation {op.config_operation}")
    return updated


def _alter(resource: Any, validate_only: bool, ctx: RequestContext) -> None:
    cluster = ctx.cluster
    if resource.resource_type == config_resources.TOPIC:
        topic = config_resources.resolve_topic(cluster, resource.resource_name)
        updated = _apply(topic.configs, resource.configs, cluster.config.topic_def,
                         lambda name: cluster.topic_config(topic, name))
        if not validate_only:
            topic.configs = updated
    elif resource.resource_type == config_resources.BROKER:
        node_level = config_resources.broker_is_node_level(cluster, ctx.node.node_id, resource.resource_name)
        layer = cluster.config.dynamic_node if node_level else cluster.config.dynamic_default

        def dynamic_def(name: str) -> Any:
            definition = cluster.config.broker_def(name)
            if not definition.dynamic:
                raise KafkaError(ErrorCode.INVALID_CONFIG, f"Cannot update these configs dynamically: {{{name}}}")
            return definition

        updated = _apply(layer, resource.configs, dynamic_def, lambda name: cluster.config[name])
        if not validate_only:
            layer.clear()
            layer.update(updated)
    elif resource.resource_type == config_resources.BROKER_LOGGER:
        return  # log levels are accepted and ignored: minibroker logs through Python logging
    else:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type {resource.resource_type}")
