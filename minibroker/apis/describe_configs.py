"""DescribeConfigs (32): values with Kafka's config sources, synonyms, types and docs."""

from __future__ import annotations

from typing import Any

from ..core.config import BROKER_CONFIGS, ConfigEntry, ConfigSource
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import DescribeConfigsRequest, DescribeConfigsResponse
from . import config_resources
from .context import RequestContext

API_KEY = 32
MIN_VERSION, MAX_VERSION = 1, 4

_Result = DescribeConfigsResponse.DescribeConfigsResult
_Config = _Result.DescribeConfigsResourceResult
_Synonym = _Config.DescribeConfigsSynonym


def handle(request: DescribeConfigsRequest, ctx: RequestContext) -> DescribeConfigsResponse:
    results = []
    for resource in request.resources:
        try:
            configs = _describe(resource, request, ctx)
            results.append(_Result(error_code=0, error_message=None, resource_type=resource.resource_type,
                                   resource_name=resource.resource_name, configs=configs))
        except KafkaError as exc:
            results.append(_Result(error_code=exc.code, error_message=exc.message,
                                   resource_type=resource.resource_type, resource_name=resource.resource_name,
                                   configs=[]))
    return DescribeConfigsResponse(throttle_time_ms=0, results=results)


def _describe(resource: Any, request: DescribeConfigsRequest, ctx: RequestContext) -> list[Any]:
    cluster = ctx.cluster
    keys = resource.configuration_keys
    entries: list[tuple[ConfigEntry, bool]] = []
    if resource.resource_type == config_resources.TOPIC:
        topic = config_resources.resolve_topic(cluster, resource.resource_name)
        for name in cluster.config.topic_names():
            if keys is None or name in keys:
                entries.append((cluster.config.describe_topic(name, topic.configs), False))
    elif resource.resource_type == config_resources.BROKER:
        node_level = config_resources.broker_is_node_level(cluster, ctx.node.node_id, resource.resource_name)
        for name in cluster.config.broker_names():
            if keys is not None and name not in keys:
                continue
            entry = cluster.config.describe(name, per_node=node_level)
            if not node_level and entry.source is not ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG:
                continue  # the cluster-default resource lists only what is set there
            entries.append((entry, not BROKER_CONFIGS[name].dynamic))
    elif resource.resource_type == config_resources.BROKER_LOGGER:
        return []
    else:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type {resource.resource_type}")
    return [_render(entry, read_only, request, ctx.api_version) for entry, read_only in entries]


def _render(entry: ConfigEntry, read_only: bool, request: DescribeConfigsRequest, version: int) -> Any:
    definition = entry.definition
    synonyms = []
    if request.include_synonyms:
        synonyms = [_Synonym(name=name, value=definition.render(value), source=source)
                    for name, value, source in entry.synonyms]
    return _Config(
        name=entry.name,
        value=entry.rendered,
        read_only=read_only,
        config_source=entry.source,
        is_default=entry.source is ConfigSource.DEFAULT_CONFIG,
        is_sensitive=False,
        synonyms=synonyms,
        config_type=definition.type,
        documentation=definition.doc if request.include_documentation else None,
    )
