"""ListConfigResources (74): the resources a DescribeConfigs may name (KIP-1142).

Versions 0-1: v0 is ListClientMetricsResources (KIP-714) and lists client metrics resources only: minibroker
has none (it does not implement KIP-714 client metrics), so the list is empty; v1 adds `resource_types` and
each entry's type. Mirrors KafkaApis.handleListConfigResources as Kafka 4.3.1 answers it.

In v1 an empty `resource_types` means every type, listed as Kafka lists them: the groups that have configs
(GROUP), this node as BROKER_LOGGER and as BROKER, every topic (TOPIC), then client metrics (none). A type
Kafka does not list (UNKNOWN 0, or any other id) fails the whole request with UNSUPPORTED_VERSION; a type
named twice is listed once. Needs DESCRIBE_CONFIGS on the cluster, else CLUSTER_AUTHORIZATION_FAILED and
nothing listed.
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation
from ..protocol.errors import ErrorCode
from ..protocol.messages import ListConfigResourcesRequest, ListConfigResourcesResponse
from . import config_resources
from .context import RequestContext

API_KEY = 74
MIN_VERSION, MAX_VERSION = 0, 1

# ListConfigResourcesRequest.supportedResourceTypes, in the order Kafka lists them
_LISTED_TYPES = (config_resources.GROUP, config_resources.BROKER_LOGGER, config_resources.BROKER,
                 config_resources.TOPIC, config_resources.CLIENT_METRICS)
_Resource = ListConfigResourcesResponse.ConfigResource


def handle(request: ListConfigResourcesRequest, ctx: RequestContext) -> ListConfigResourcesResponse:
    if not ctx.authorize_cluster(AclOperation.DESCRIBE_CONFIGS):
        return _answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [])
    if ctx.api_version == 0:
        return _answer(ErrorCode.NONE, [])  # client metrics resources only, and there are none
    wanted = set(request.resource_types) or set(_LISTED_TYPES)
    if not wanted <= set(_LISTED_TYPES):
        return _answer(ErrorCode.UNSUPPORTED_VERSION, [])
    node = str(ctx.node.node_id)
    resources: list[Any] = []
    for resource_type in _LISTED_TYPES:
        if resource_type not in wanted:
            continue
        if resource_type == config_resources.GROUP:
            names = ctx.cluster.config.configured_groups()
        elif resource_type in (config_resources.BROKER_LOGGER, config_resources.BROKER):
            names = [node]
        elif resource_type == config_resources.TOPIC:
            names = sorted(ctx.cluster.topic_names())
        else:
            names = []
        resources += [_Resource(resource_name=name, resource_type=resource_type) for name in names]
    return _answer(ErrorCode.NONE, resources)


def _answer(code: ErrorCode, resources: list[Any]) -> ListConfigResourcesResponse:
    return ListConfigResourcesResponse(throttle_time_ms=0, error_code=code, config_resources=resources)
