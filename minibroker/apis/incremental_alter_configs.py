"""IncrementalAlterConfigs (44): SET, DELETE, APPEND and SUBTRACT single configs.

Versions 0-1: v1 is flexible. Mirrors Kafka 4's path: ConfigAdminManager.preprocess on the receiving broker
(duplicates, null values, the broker id, prepareIncrementalConfigs and DynamicBrokerConfig's checks for broker
configs, log4j levels for BROKER_LOGGER after ALTER_CONFIGS on the cluster), then on the controller
ControllerApis.authorizeAlterResource (ALTER_CONFIGS on a TOPIC or GROUP resource itself, on the cluster for
BROKER and CLIENT_METRICS; a refused resource changes nothing) and
ConfigurationControlManager.incrementalAlterConfigs for topics and groups (GroupConfig.validate: names, values,
the broker's bounds).

Every check and every change goes through the config registry (core/config.py).
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation
from ..core.config import DELETE
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse
from . import config_resources
from .context import RequestContext

API_KEY = 44
MIN_VERSION, MAX_VERSION = 0, 1

_Response = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse


def handle(request: IncrementalAlterConfigsRequest, ctx: RequestContext) -> IncrementalAlterConfigsResponse:
    responses = config_resources.alter_each(
        request.resources, lambda resource: _alter(resource, request.validate_only, ctx), _Response)
    return IncrementalAlterConfigsResponse(throttle_time_ms=0, responses=responses)


def _alter(resource: Any, validate_only: bool, ctx: RequestContext) -> None:
    config = ctx.cluster.config
    config_resources.check_configs(resource.configs, lambda op: op.config_operation == DELETE)
    ops = [(op.name, op.config_operation, op.value) for op in resource.configs]
    if resource.resource_type == config_resources.BROKER_LOGGER:
        # RuntimeLoggerManager.applyChangesForResource: a ClusterAuthorizationException with the error's
        # default text, which ApiError.fromThrowable turns into no message
        if not ctx.authorize_cluster(AclOperation.ALTER_CONFIGS):
            raise KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
        return  # log levels are accepted and ignored: minibroker logs through Python logging
    # the operations applied to each type's current configs
    config_resources.alter_resource(ctx, resource, validate_only, config_resources.ConfigChange(
        broker=lambda node_id, only: config.incremental_alter_dynamic(node_id, ops, validate_only=only),
        topic=lambda current: config.incremental_topic_configs(current, ops),
        group=lambda group_id: config.incremental_group_configs(group_id, ops)))
