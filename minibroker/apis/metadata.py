"""Metadata (3): brokers, topics with ids, partitions and leaders; auto-creates topics."""

from __future__ import annotations

import uuid

from ..core.cluster import INTERNAL_TOPICS, Cluster, Topic, validate_topic_name
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import MetadataRequest, MetadataResponse
from .context import RequestContext

API_KEY = 3
MIN_VERSION, MAX_VERSION = 0, 13

ZERO_UUID = uuid.UUID(int=0)
AUTHORIZED_OPERATIONS_OMITTED = None  # the engine encodes None as -2147483648 (not requested)

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
        authorized_operations=AUTHORIZED_OPERATIONS_OMITTED,
    )


def _error_topic(
    name: str | None, code: ErrorCode, topic_id: uuid.UUID = ZERO_UUID
) -> MetadataResponse.MetadataResponseTopic:
    return _Topic(error_code=code, name=name, topic_id=topic_id, is_internal=False, partitions=[],
                  authorized_operations=AUTHORIZED_OPERATIONS_OMITTED)


def handle(request: MetadataRequest, ctx: RequestContext) -> MetadataResponse:
    cluster = ctx.cluster
    version = ctx.api_version
    # v0 asks for every topic with an empty list; v1+ with null
    wants_all = request.topics is None or (version == 0 and not request.topics)
    auto_create = request.allow_auto_topic_creation if version >= 4 else True
    topics = []
    if wants_all:
        topics = [topic_metadata(cluster, t) for t in cluster.topics.values()]
    else:
        for wanted in request.topics:
            name = wanted.name
            if name is None and version >= 10 and wanted.topic_id not in (None, ZERO_UUID):
                topic = cluster.topics_by_id.get(wanted.topic_id)
                topics.append(topic_metadata(cluster, topic) if topic else
                              _error_topic(None, ErrorCode.UNKNOWN_TOPIC_ID, wanted.topic_id))
                continue
            topics.append(_lookup(cluster, name, auto_create))
    return MetadataResponse(
        throttle_time_ms=0,
        brokers=[_Broker(node_id=n.node_id, host=n.host, port=n.port, rack=n.rack) for n in cluster.nodes],
        cluster_id=cluster.cluster_id,
        controller_id=cluster.controller_id,
        topics=topics,
        authorized_operations=AUTHORIZED_OPERATIONS_OMITTED,
        error_code=0,
    )


def _lookup(cluster: Cluster, name: str | None, auto_create: bool) -> MetadataResponse.MetadataResponseTopic:
    topic = cluster.topics.get(name or "")
    if topic is not None:
        return topic_metadata(cluster, topic)
    try:
        validate_topic_name(name)
    except KafkaError:
        return _error_topic(name, ErrorCode.INVALID_TOPIC_EXCEPTION)
    if auto_create:
        created = cluster.auto_create(name or "")
        if created is not None:
            # Kafka answers the first request LEADER_NOT_AVAILABLE while the topic is created;
            # here creation is instant, so the metadata is returned at once.
            return topic_metadata(cluster, created)
    return _error_topic(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
