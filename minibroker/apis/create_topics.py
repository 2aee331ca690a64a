"""CreateTopics (19): new topics with partitions and validated config overrides.

Versions 2-7, and 0-1 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0): v1 adds
validateOnly and per-topic error messages; v2 the throttle time; v4 makes the partition count and replication
factor optional without assignments (KIP-464); v5 is flexible and answers the created topics' configs
(KIP-525); v6 may answer THROTTLING_QUOTA_EXCEEDED (KIP-599); v7 answers the new topic's id. Mirrors
ControllerApis.createTopics and ReplicationControlManager.createTopics.

ControllerApis answers duplicated names itself, authorizes the rest (CREATE on the cluster, else CREATE on each
topic: TOPIC_AUTHORIZATION_FAILED, "Authorization failed.", and nothing created) and hands the authorized
topics to the controller as one operation. A created topic's configs, partition count and replication factor
are answered only to a caller that may DESCRIBE_CONFIGS it (else topic_config_error_code
TOPIC_AUTHORIZATION_FAILED). When the operation is too large as a whole, every topic of the request gets the
controller's POLICY_VIOLATION and nothing is created (CreateTopicsRequest.getErrorResponse).
`__cluster_metadata` is never created, whoever asks: INVALID_REQUEST, answered with the refused topics.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.cluster_model import METADATA_TOPIC
from ..core.replication_control import NewTopic, TopicPlan
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import CreateTopicsRequest, CreateTopicsResponse
from .context import RequestContext

API_KEY = 19
MIN_VERSION, MAX_VERSION = 2, 7
# Releases before 4.0 served v0-1 (KIP-896 removed them); they differ only in fields the engine leaves out.
PRE_KIP896_MIN_VERSION = 0

_Result = CreateTopicsResponse.CreatableTopicResult
_Config = _Result.CreatableTopicConfigs
# Topic.METADATA_TOPIC_NAME: the KRaft metadata log, which no CreateTopics may create
_PROHIBITED = KafkaError(ErrorCode.INVALID_REQUEST,
                         f"Creation of internal topic {METADATA_TOPIC} is prohibited.")
_NOT_AUTHORIZED = KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")


def handle(request: CreateTopicsRequest, ctx: RequestContext) -> CreateTopicsResponse:
    cluster = ctx.cluster
    counts = Counter(t.name for t in request.topics)
    unique = [t for t in request.topics if counts[t.name] == 1]
    # ControllerApis.createTopics: the metadata topic is taken out before anything is authorized
    names = [t.name for t in unique if t.name != METADATA_TOPIC]
    # ControllerApis.handleCreateTopics: CREATE on the cluster covers every topic
    creatable = (set(names) if ctx.authorize_cluster(AclOperation.CREATE)
                 else ctx.authorized_names(AclOperation.CREATE, ResourceType.TOPIC, names))
    describable = ctx.authorized_names(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names)
    authorized = [t for t in unique if t.name in creatable]
    try:
        outcomes = cluster.replication.create_topics([_new_topic(t) for t in authorized],
                                                     validate_only=request.validate_only)
    except KafkaError as exc:
        return CreateTopicsResponse(throttle_time_ms=0, topics=[_error(t.name, exc) for t in request.topics])
    results = [_error(t.name, outcome) if isinstance(outcome, KafkaError)
               else _success(outcome, ctx, t.name in describable)
               for t, outcome in zip(authorized, outcomes, strict=True)]
    # ControllerApis.createTopics: after the controller's results, one INVALID_REQUEST per duplicated name,
    # then one INVALID_REQUEST for __cluster_metadata and one TOPIC_AUTHORIZATION_FAILED per topic the caller
    # may not create
    results += [_error(name, KafkaError(ErrorCode.INVALID_REQUEST, "Duplicate topic name."))
                for name, count in counts.items() if count > 1]
    results += [_error(t.name, _PROHIBITED if t.name == METADATA_TOPIC else _NOT_AUTHORIZED)
                for t in unique if t.name not in creatable]
    return CreateTopicsResponse(throttle_time_ms=0, topics=results)


def _new_topic(wanted: Any) -> NewTopic:
    return NewTopic(wanted.name, wanted.num_partitions, wanted.replication_factor,
                    {c.name: c.value for c in wanted.configs},
                    [(a.partition_index, list(a.broker_ids)) for a in wanted.assignments])


def _error(name: str, exc: KafkaError) -> Any:
    # a CreatableTopicResult with only name, code and message set; the rest keep their defaults
    return _Result(name=name, error_code=exc.code, error_message=exc.message, topic_config_error_code=0,
                   num_partitions=-1, replication_factor=-1, configs=[])


def _success(plan: TopicPlan, ctx: RequestContext, describable: bool) -> Any:
    # validate-only: Kafka's controller answers the id it drew for the topic it did not create
    topic_id = plan.topic.topic_id if plan.topic is not None else uuid.uuid4()
    if not describable:
        # ReplicationControlManager.createTopic: created, but its configs and sizes are not the caller's to see
        return _Result(name=plan.name, topic_id=topic_id, error_code=0, error_message=None,
                       topic_config_error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, num_partitions=-1,
                       replication_factor=-1, configs=[])
    config = ctx.cluster.config
    described = []
    for name in config.topic_names():
        entry = config.describe_topic(name, {k: config.topic_def(k).parse(v) if isinstance(v, str) else v
                                             for k, v in plan.overrides.items()})
        described.append(_Config(name=name, value=entry.rendered, read_only=False, config_source=entry.source,
                                 is_sensitive=False))
    return _Result(
        name=plan.name,
        topic_id=topic_id,
        error_code=0,
        error_message=None,
        topic_config_error_code=0,
        num_partitions=plan.num_partitions,
        replication_factor=plan.replication_factor,
        configs=described,
    )
