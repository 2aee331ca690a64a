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
    # each type's whole new set; BROKER_LOGGER is an unknown type here (KIP-412 added it to
    # IncrementalAlterConfigs only)
    config_resources.alter_resource(ctx, resource, validate_only, config_resources.ConfigChange(
        broker=lambda node_id, only: config.alter_dynamic(node_id, raw, validate_only=only),
        topic=lambda current: config.parse_topic_configs(raw),
        group=lambda group_id: config.parse_group_configs(raw)))
