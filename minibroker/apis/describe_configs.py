"""DescribeConfigs (32): values with Kafka's config sources, synonyms, types and docs.

Versions 1-4, and v0 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0): v1 adds
IncludeSynonyms, config sources and synonyms in place of IsDefault; v3 adds IncludeDocumentation and config
types; v4 is flexible. Mirrors ConfigHelper.handleDescribeConfigsRequest and ConfigHelper.describeConfigs.

A TOPIC lists every topic config (LogConfig), BROKER "<id>" every broker config of the receiving node
(read-only ones included), BROKER "" only the dynamic cluster defaults that are set, a GROUP every group
config (Kafka 4; a group never configured, or that does not exist, shows the broker's defaults); values,
sources and synonyms come from the config registry (core/config.py). Authorized first: DESCRIBE_CONFIGS on a
TOPIC or GROUP resource itself, on the cluster for BROKER, BROKER_LOGGER and CLIENT_METRICS; a refused resource
is answered after the described ones with TOPIC_, GROUP_ or CLUSTER_AUTHORIZATION_FAILED and nothing looked
up. A resource type Kafka does not know fails the whole request, every resource INVALID_REQUEST and nothing
described.
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation
from ..core.cluster_model import validate_topic_name
from ..core.config import ConfigEntry, ConfigSource
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import DescribeConfigsRequest, DescribeConfigsResponse
from . import config_resources
from .context import RequestContext

API_KEY = 32
MIN_VERSION, MAX_VERSION = 1, 4
# Releases before 4.0 served v0 (KIP-896 removed it): no synonyms, and is_default instead of config_source.
PRE_KIP896_MIN_VERSION = 0

_Result = DescribeConfigsResponse.DescribeConfigsResult
_Config = _Result.DescribeConfigsResourceResult
_Synonym = _Config.DescribeConfigsSynonym


def handle(request: DescribeConfigsRequest, ctx: RequestContext) -> DescribeConfigsResponse:
    if any(resource.resource_type not in config_resources.KAFKA_TYPES for resource in request.resources):
        # ConfigHelper.handleDescribeConfigsRequest throws InvalidRequestException while authorizing; KafkaApis
        # answers with DescribeConfigsRequest.getErrorResponse: every resource, Errors.INVALID_REQUEST's own message
        invalid = KafkaError(ErrorCode.INVALID_REQUEST, config_resources.INVALID_REQUEST_MESSAGE)
        return DescribeConfigsResponse(throttle_time_ms=0, results=[_error(r, invalid) for r in request.resources])
    results = []
    refused = []
    for resource in request.resources:
        refusal = config_resources.authorization_error(ctx, AclOperation.DESCRIBE_CONFIGS, resource.resource_type,
                                                       resource.resource_name)
        if refusal is not None:
            refused.append(_error(resource, refusal))
            continue
        try:
            configs = _describe(resource, request, ctx)
            # ConfigHelper answers a described resource with an empty message, not a null one
            results.append(_Result(error_code=0, error_message="", resource_type=resource.resource_type,
                                   resource_name=resource.resource_name, configs=configs))
        except KafkaError as exc:
            results.append(_error(resource, exc))
    # ConfigHelper.handleDescribeConfigsRequest: the authorized resources' results, then the refused ones
    results += refused
    return DescribeConfigsResponse(throttle_time_ms=0, results=results)


def _error(resource: Any, exc: KafkaError) -> Any:
    return _Result(error_code=exc.code, error_message=exc.message, resource_type=resource.resource_type,
                   resource_name=resource.resource_name, configs=[])


def _describe(resource: Any, request: DescribeConfigsRequest, ctx: RequestContext) -> list[Any]:
    config = ctx.cluster.config
    keys = set(resource.configuration_keys or ())  # null or empty: every config (ConfigHelperUtils)
    entries: list[ConfigEntry] = []
    if resource.resource_type == config_resources.TOPIC:
        validate_topic_name(resource.resource_name)
        topic = ctx.cluster.topic(resource.resource_name)
        if topic is None:  # ConfigHelper sets the code and no message
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
        entries = [config.describe_topic(name, topic.configs, ctx.node.node_id) for name in
                   config.describe_order([name for name in config.topic_names() if not keys or name in keys],
                                         bool(keys))]
    elif resource.resource_type == config_resources.BROKER:
        if config_resources.describe_broker_target(ctx.node, resource.resource_name):
            static = config_resources.node_static_configs(ctx.node)
            names = [name for name in config.broker_names(ctx.node.node_id) if not keys or name in keys]
            entries = [config.describe(name, True, ctx.node.node_id, static)
                       for name in config.describe_order(names, bool(keys))]
        else:
            entries = [config.describe(name, per_node=False) for name in sorted(config.dynamic_default)
                       if not keys or name in keys]
    elif resource.resource_type == config_resources.GROUP:
        # any group id, a group that does not exist included: its configs are the broker's defaults
        config_resources.group_target(ctx.node, resource.resource_name, altering=False)
        entries = [config.describe_group(resource.resource_name, name)
                   for name in config.group_names() if not keys or name in keys]
    elif resource.resource_type == config_resources.BROKER_LOGGER:
        config_resources.describe_logger_target(ctx.node, resource.resource_name)
        return []  # minibroker logs through Python logging; it has no log4j loggers to list
    else:
        raise config_resources.unserved_type(resource.resource_type,
                                             f"Unsupported resource type {resource.resource_type}")
    return [_render(entry, request, ctx.api_version) for entry in entries]


def _render(entry: ConfigEntry, request: DescribeConfigsRequest, version: int) -> Any:
    definition = entry.definition
    synonyms = []
    if request.include_synonyms:
        synonyms = [_Synonym(name=name, value=value, source=source)
                    for name, value, source in entry.rendered_synonyms()]
    return _Config(
        name=entry.name,
        value=entry.rendered,
        read_only=entry.read_only,
        config_source=entry.source,
        is_default=entry.source is ConfigSource.DEFAULT_CONFIG,
        is_sensitive=definition.sensitive,
        synonyms=synonyms,
        config_type=definition.type,
        documentation=(definition.doc or None) if request.include_documentation else None,
    )
