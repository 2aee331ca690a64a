"""CreateTopics (19): new topics with partitions and validated config overrides."""

from __future__ import annotations

from typing import Any

from ..core.config import TOPIC_CONFIGS
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import CreateTopicsRequest, CreateTopicsResponse
from .context import RequestContext

API_KEY = 19
MIN_VERSION, MAX_VERSION = 2, 7

_Result = CreateTopicsResponse.CreatableTopicResult
_Config = _Result.CreatableTopicConfigs


def handle(request: CreateTopicsRequest, ctx: RequestContext) -> CreateTopicsResponse:
    cluster = ctx.cluster
    names = [t.name for t in request.topics]
    results = []
    for wanted in request.topics:
        try:
            if names.count(wanted.name) > 1:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Create topics request from client contains a "
                                 f"duplicate topic: {wanted.name}")
            if wanted.assignments:
                if wanted.num_partitions != -1 or wanted.replication_factor != -1:
                    raise KafkaError(ErrorCode.INVALID_REQUEST, "Both numPartitions or replicationFactor and "
                                     "replicasAssignments were set. Both cannot be used at the same time.")
                num_partitions = len(wanted.assignments)
                replication_factor = len(wanted.assignments[0].broker_ids)
            else:
                num_partitions, replication_factor = wanted.num_partitions, wanted.replication_factor
            configs = {c.name: c.value for c in wanted.configs}
            topic = cluster.create_topic(wanted.name, num_partitions, replication_factor, configs,
                                         validate_only=request.validate_only)
            results.append(_success(wanted, topic, ctx, num_partitions, replication_factor, configs))
        except KafkaError as exc:
            results.append(_Result(name=wanted.name, error_code=exc.code, error_message=exc.message,
                                   topic_config_error_code=0, num_partitions=-1, replication_factor=-1,
                                   configs=None))
    return CreateTopicsResponse(throttle_time_ms=0, topics=results)


def _success(wanted: Any, topic: Any, ctx: RequestContext, num_partitions: int, replication_factor: int,
             configs: dict[str, str | None]) -> Any:
    cluster = ctx.cluster
    if num_partitions == -1:
        num_partitions = cluster.config["num.partitions"]
    if replication_factor == -1:
        replication_factor = cluster.config["default.replication.factor"]
    overrides = topic.configs if topic is not None else {k: v for k, v in configs.items() if v is not None}
    described = []
    for name in cluster.config.topic_names():
        entry = cluster.config.describe_topic(name, {k: TOPIC_CONFIGS[k].parse(v) if isinstance(v, str) else v
                                                     for k, v in overrides.items()})
        described.append(_Config(name=name, value=entry.rendered, read_only=False, config_source=entry.source,
                                 is_sensitive=False))
    return _Result(
        name=wanted.name,
        topic_id=topic.topic_id if topic is not None else None,
        error_code=0,
        error_message=None,
        topic_config_error_code=0,
        num_partitions=num_partitions,
        replication_factor=replication_factor,
        configs=described,
    )
