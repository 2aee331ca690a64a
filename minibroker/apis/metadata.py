"""Metadata (3): brokers, topics with ids, partitions and leaders; auto-creates topics.

Versions 0-13, as KafkaApis.handleTopicMetadataRequest answers them: internal topics flagged
`is_internal`, authorized operations (v8+) when asked, and the unknown topics of one request
auto-created together, as one CreateTopics that the controller bounds like any other.
"""

from __future__ import annotations

import uuid

from ..core.cluster import INTERNAL_TOPICS, Cluster, Topic, validate_topic_name
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import MetadataRequest, MetadataResponse
from .authorized_operations import CLUSTER_OPERATIONS, NOT_REQUESTED, TOPIC_OPERATIONS
from .context import RequestContext

API_KEY = 3
MIN_VERSION, MAX_VERSION = 0, 13

ZERO_UUID = uuid.UUID(int=0)
AUTHORIZED_OPERATIONS_FROM = 8
CLUSTER_AUTHORIZED_OPERATIONS_UNTIL = 10

_Topic = MetadataResponse.MetadataResponseTopic
_Partition = _Topic.MetadataResponsePartition
_Broker = MetadataResponse.MetadataResponseBroker


def topic_metadata(cluster: Cluster, topic: Topic) -> MetadataResponse.MetadataResponseTopic:
    """One topic's entry, partitions and leaders included."""
    return _Topic(
        error_code=0,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.name in INTERNAL_TOPICS,
        partitions=[
            _Partition(
                error_code=0,
                partition_index=p.index,
                leader_id=p.leader_id,
                leader_epoch=p.log.leader_epoch,
                replica_nodes=list(p.replicas),
                isr_nodes=list(p.replicas),
                offline_replicas=[],
            )
            for p in topic.partitions
        ],
        authorized_operations=NOT_REQUESTED,
    )


def _error_topic(
    name: str | None, code: ErrorCode, topic_id: uuid.UUID = ZERO_UUID
) -> MetadataResponse.MetadataResponseTopic:
    return _Topic(error_code=code, name=name, topic_id=topic_id, is_internal=name in INTERNAL_TOPICS, partitions=[],
                  authorized_operations=NOT_REQUESTED)


def handle(request: MetadataRequest, ctx: RequestContext) -> MetadataResponse:
    cluster = ctx.cluster
    version = ctx.api_version
    # v0 asks for every topic with an empty list; v1+ with null
    wants_all = request.topics is None or (version == 0 and not request.topics)
    auto_create = request.allow_auto_topic_creation if version >= 4 else True
    by_id: list[MetadataResponse.MetadataResponseTopic] = []  # never given authorized operations, as in Kafka
    topics: list[MetadataResponse.MetadataResponseTopic] = []
    if wants_all:
        topics = [topic_metadata(cluster, t) for t in cluster.topics.values()]
    else:
        names: list[str | None] = []
        for wanted in request.topics:
            if wanted.name is None and version >= 10 and wanted.topic_id not in (None, ZERO_UUID):
                topic = cluster.topics_by_id.get(wanted.topic_id)
                by_id.append(topic_metadata(cluster, topic) if topic else
                             _error_topic(None, ErrorCode.UNKNOWN_TOPIC_ID, wanted.topic_id))
            elif wanted.name not in names:
                names.append(wanted.name)
        topics = _lookup(cluster, names, auto_create)
    cluster_operations: set[int] | None = NOT_REQUESTED
    if version >= AUTHORIZED_OPERATIONS_FROM:
        if version <= CLUSTER_AUTHORIZED_OPERATIONS_UNTIL and request.include_cluster_authorized_operations:
            cluster_operations = set(CLUSTER_OPERATIONS)
        if request.include_topic_authorized_operations:
            for entry in topics:
                entry.authorized_operations = set(TOPIC_OPERATIONS)
    return MetadataResponse(
        throttle_time_ms=0,
        brokers=[_Broker(node_id=n.node_id, host=ctx.address(n)[0], port=ctx.address(n)[1], rack=n.rack)
                 for n in cluster.nodes],
        cluster_id=cluster.cluster_id,
        controller_id=cluster.controller_id,
        topics=by_id + topics,
        authorized_operations=cluster_operations,
        error_code=0,
    )


def _lookup(cluster: Cluster, names: list[str | None],
            auto_create: bool) -> list[MetadataResponse.MetadataResponseTopic]:
    """Entries for the named topics; the unknown ones with valid names auto-created together if allowed."""
    missing = []
    for name in names:
        if (name or "") in cluster.topics:
            continue
        try:
            validate_topic_name(name)
        except KafkaError:
            continue
        missing.append(name or "")
    # Kafka answers UNKNOWN_TOPIC_OR_PARTITION while the controller creates the topics; here
    # creation is instant, so what was created is described at once and a refusal leaves the error.
    created = cluster.auto_create_topics(missing) if auto_create else {}
    entries = []
    for name in names:
        topic = cluster.topics.get(name or "") or created.get(name or "")
        if topic is not None:
            entries.append(topic_metadata(cluster, topic))
        elif (name or "") in missing:
            entries.append(_error_topic(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
        else:
            entries.append(_error_topic(name, ErrorCode.INVALID_TOPIC_EXCEPTION))
    return entries
