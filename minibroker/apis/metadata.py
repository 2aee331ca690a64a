"""Metadata (3): brokers, topics with ids, partitions and leaders; auto-creates topics.

Versions 0-13: in v0 an empty topic list means every topic, from v1 a null one does; v1 adds racks, the
controller and `is_internal`; v2 the cluster id; v3 the throttle time; v4 AllowAutoTopicCreation; v5 offline
replicas; v7 leader epochs; v8 authorized operations, when asked; v9 is flexible; v10 topic ids; v11 drops the
cluster's authorized operations (DescribeCluster answers them, KIP-700); v12 looks topics up by id; v13 adds
a top-level error code. Mirrors KafkaApis.handleTopicMetadataRequest.

The unknown topics of one request are auto-created together, as one CreateTopics that the controller bounds
like any other. With an authorizer, a topic needs DESCRIBE to be shown and, to be auto-created, CREATE on the
cluster or itself.
"""

from __future__ import annotations

import uuid

from ..core.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..core.cluster import Cluster
from ..core.cluster_model import INTERNAL_TOPICS, Topic, validate_topic_name
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import MetadataRequest, MetadataResponse
from .authorized_operations import NOT_REQUESTED
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
    unknown_ids: list[MetadataResponse.MetadataResponseTopic] = []
    topics: list[MetadataResponse.MetadataResponseTopic] = []
    # KafkaApis.handleTopicMetadataRequest: topics the caller may not DESCRIBE are left out of "all topics"
    # and otherwise answered TOPIC_AUTHORIZATION_FAILED whether they exist or not; a topic that would be
    # auto-created needs CREATE on the cluster or on the topic. Both kinds come after the others, as in Kafka.
    refused: list[MetadataResponse.MetadataResponseTopic] = []
    if wants_all:
        visible = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, cluster.topic_names())
        topics = [topic_metadata(cluster, t) for t in cluster.all_topics() if t.name in visible]
    else:
        names: dict[str | None, None] = {}  # each name once, in the order first asked for
        topic_ids = dict.fromkeys(wanted.topic_id for wanted in request.topics
                                  if version >= 10 and wanted.topic_id not in (None, ZERO_UUID))
        if topic_ids:
            # one topic id makes the whole request a lookup by id: the names asked for are left out, the unknown
            # ids come first, the known ones are answered as if asked for by name
            for topic_id in topic_ids:
                topic = cluster.topic_by_id(topic_id)
                if topic is None:
                    unknown_ids.append(_error_topic(None, ErrorCode.UNKNOWN_TOPIC_ID, topic_id))
                elif ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name):
                    names[topic.name] = None
                else:  # topic ids are not secret: Kafka names the id
                    refused.append(_Topic(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=None,
                                          topic_id=topic.topic_id, is_internal=False, partitions=[],
                                          authorized_operations=NOT_REQUESTED))
        else:
            for wanted in request.topics:
                names[wanted.name] = None
        visible = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, (n or "" for n in names))
        may_create = _creatable(ctx, [n or "" for n in names if (n or "") in visible], auto_create)
        topics = _lookup(cluster, [n for n in names if (n or "") in visible and (n or "") in may_create],
                         auto_create)
        refused += [_Topic(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=n, topic_id=ZERO_UUID,
                           is_internal=(n or "") in INTERNAL_TOPICS, partitions=[], authorized_operations=NOT_REQUESTED)
                    for n in names if (n or "") in visible and (n or "") not in may_create]
        refused += [_Topic(error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, name=n, topic_id=ZERO_UUID,
                           is_internal=False, partitions=[], authorized_operations=NOT_REQUESTED)
                    for n in names if (n or "") not in visible]
    cluster_operations: set[int] | None = NOT_REQUESTED
    if version >= AUTHORIZED_OPERATIONS_FROM:
        if version <= CLUSTER_AUTHORIZED_OPERATIONS_UNTIL and request.include_cluster_authorized_operations:
            cluster_operations = (set(ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME))
                                  if ctx.authorize_cluster(AclOperation.DESCRIBE) else set())
        if request.include_topic_authorized_operations:
            for entry in topics:
                entry.authorized_operations = set(ctx.authorized_operations(ResourceType.TOPIC, entry.name))
    topics += refused
    return MetadataResponse(
        throttle_time_ms=0,
        brokers=[_Broker(node_id=n.node_id, host=ctx.address(n)[0], port=ctx.address(n)[1], rack=n.rack)
                 for n in cluster.nodes],
        cluster_id=cluster.cluster_id,
        controller_id=cluster.controller_id,
        topics=unknown_ids + topics,
        authorized_operations=cluster_operations,
        error_code=0,
    )


def _creatable(ctx: RequestContext, names: list[str], auto_create: bool) -> set[str]:
    """Of `names`, those the caller may see created or that exist: CREATE on the cluster or on the topic."""
    cluster = ctx.cluster
    missing = [name for name in names if cluster.topic(name) is None]
    if (not missing or not auto_create or not cluster.config["auto.create.topics.enable"]
            or ctx.authorize_cluster(AclOperation.CREATE)):
        return set(names)
    return set(names) - set(missing) | ctx.authorized_names(AclOperation.CREATE, ResourceType.TOPIC, missing)


def _lookup(cluster: Cluster, names: list[str | None],
            auto_create: bool) -> list[MetadataResponse.MetadataResponseTopic]:
    """Entries for the named topics; the unknown ones with valid names auto-created together if allowed."""
    missing: dict[str, None] = {}  # ordered: topics are auto-created in the order asked for
    for name in names:
        if cluster.topic(name or "") is not None:
            continue
        try:
            validate_topic_name(name)
        except KafkaError:
            continue
        missing[name or ""] = None
    # Kafka answers UNKNOWN_TOPIC_OR_PARTITION while the controller creates the topics; here
    # creation is instant, so what was created is described at once and a refusal leaves the error.
    created = cluster.replication.auto_create_topics(list(missing)) if auto_create else {}
    entries = []
    for name in names:
        topic = cluster.topic(name or "") or created.get(name or "")
        if topic is not None:
            entries.append(topic_metadata(cluster, topic))
        elif (name or "") in missing:
            entries.append(_error_topic(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
        else:
            entries.append(_error_topic(name, ErrorCode.INVALID_TOPIC_EXCEPTION))
    return entries
