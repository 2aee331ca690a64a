"""DeleteTopics (20): remove topics by name, or from v6 by name or id.

Versions 1-6, and v0 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0): v0-3 are one
request shape, v1 adds the throttle time and v3 TOPIC_DELETION_DISABLED; v4 is flexible; v5 adds error messages
and THROTTLING_QUOTA_EXCEEDED (KIP-599); v6 names topics by name or id. Mirrors ControllerApis.deleteTopics.

With `delete.topic.enable=false` the operation fails as a whole: every topic of the request is answered as
given with TOPIC_DELETION_DISABLED (INVALID_REQUEST before v3) and no message
(DeleteTopicsRequest.getErrorResponse). Otherwise a v6 topic gives a name or an id, not neither nor both, and a
name or id given twice is answered once as a duplicate (INVALID_REQUEST). Authorization: DELETE on the cluster
covers every topic; else a topic needs DELETE on itself, and one the caller may not DESCRIBE is refused without
saying whether it exists (a name is TOPIC_AUTHORIZATION_FAILED before UNKNOWN_TOPIC_OR_PARTITION; an id
resolved to such a topic is answered without its name). Nothing refused is deleted. Kafka shuffles its
answers; here each comes at the place of its topic in the request.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import DeleteTopicsRequest, DeleteTopicsResponse
from .context import RequestContext

API_KEY = 20
MIN_VERSION, MAX_VERSION = 1, 6
# Releases before 4.0 served v0 (KIP-896 removed it): v1 without the throttle time.
PRE_KIP896_MIN_VERSION = 0

ZERO_UUID = uuid.UUID(int=0)
_Result = DeleteTopicsResponse.DeletableTopicResult
# new ApiError(error) carries the error's default message (Errors.message)
_NOT_AUTHORIZED = "Topic authorization failed."
_UNKNOWN_ID = "This server does not host this topic ID."


def handle(request: DeleteTopicsRequest, ctx: RequestContext) -> DeleteTopicsResponse:
    cluster = ctx.cluster
    if ctx.api_version >= 6:
        # the zero id decodes as None
        wanted = [(t.name, ZERO_UUID if t.topic_id is None else t.topic_id) for t in request.topics]
    else:
        wanted = [(name, ZERO_UUID) for name in request.topic_names]
    if not cluster.config["delete.topic.enable"]:
        # ControllerApis.deleteTopics fails the future before looking at any topic
        code = ErrorCode.TOPIC_DELETION_DISABLED if ctx.api_version >= 3 else ErrorCode.INVALID_REQUEST
        return DeleteTopicsResponse(throttle_time_ms=0, responses=[
            _Result(name=name, topic_id=topic_id, error_code=code, error_message=None) for name, topic_id in wanted])
    answers: dict[int, Any] = {}  # by the index of the request's topic the answer is placed at

    def answer(index: int, name: str | None, topic_id: uuid.UUID, code: int, message: str | None) -> None:
        answers[index] = _Result(name=name, topic_id=topic_id, error_code=code, error_message=message)

    name_counts = Counter(name for name, topic_id in wanted if name is not None and topic_id == ZERO_UUID)
    id_counts = Counter(topic_id for name, topic_id in wanted if name is None and topic_id != ZERO_UUID)
    duplicate_names = {name for name, count in name_counts.items() if count > 1}
    duplicate_ids = {topic_id for topic_id, count in id_counts.items() if count > 1}
    by_name: dict[str, int] = {}  # each name given once, to the index that gives it
    by_id: dict[uuid.UUID, int] = {}  # likewise the ids
    for index, (name, topic_id) in enumerate(wanted):
        if name is None and topic_id == ZERO_UUID:
            answer(index, None, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified.")
        elif name is not None and topic_id != ZERO_UUID:
            answer(index, name, topic_id, ErrorCode.INVALID_REQUEST,
                   "You may not specify both topic name and topic id.")
        elif name in duplicate_names:
            if name_counts.pop(name, None):  # one answer per duplicated name, at its first place
                answer(index, name, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
        elif topic_id in duplicate_ids:
            if id_counts.pop(topic_id, None):
                answer(index, None, topic_id, ErrorCode.INVALID_REQUEST, "Duplicate topic id.")
        elif name is not None:
            by_name[name] = index
        else:
            by_id[topic_id] = index

    # the authorizer takes names: those given, and those the given ids resolve to
    id_to_name: dict[uuid.UUID, str] = {}
    for topic_id, index in by_id.items():
        topic = cluster.topic_by_id(topic_id)
        if topic is None:  # ReplicationControlManager.findTopicNames
            answer(index, None, topic_id, ErrorCode.UNKNOWN_TOPIC_ID, _UNKNOWN_ID)
        else:
            id_to_name[topic_id] = topic.name
    names = set(by_name) | set(id_to_name.values())
    if ctx.authorize_cluster(AclOperation.DELETE):
        describable = deletable = names
    else:
        describable = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, names)
        deletable = ctx.authorized_names(AclOperation.DELETE, ResourceType.TOPIC, names)
    # by id only DELETE counts (the id already resolved); the name is shown to who may describe the topic
    for topic_id, name in list(id_to_name.items()):
        if name not in deletable:
            answer(by_id[topic_id], name if name in describable else None, topic_id,
                   ErrorCode.TOPIC_AUTHORIZATION_FAILED, _NOT_AUTHORIZED)
            del id_to_name[topic_id]
    # by name, a topic the caller may not DESCRIBE is refused whether or not it exists
    to_delete: dict[uuid.UUID, int] = {topic_id: by_id[topic_id] for topic_id in id_to_name}
    for name, index in by_name.items():
        topic = cluster.topic(name)
        if name not in describable:
            answer(index, name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED, _NOT_AUTHORIZED)
        elif topic is None:  # ReplicationControlManager.findTopicIds
            answer(index, name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                   "This server does not host this topic-partition.")
        elif name not in deletable:
            answer(index, name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED, _NOT_AUTHORIZED)
        elif topic.topic_id in duplicate_ids or topic.topic_id in to_delete:
            # the name maps to an id also given: that id is not deleted and its own entry gets no answer
            duplicate_ids.add(topic.topic_id)
            to_delete.pop(topic.topic_id, None)
            id_to_name.pop(topic.topic_id, None)
            answer(index, name, topic.topic_id, ErrorCode.INVALID_REQUEST,
                   "The provided topic name maps to an ID that was already supplied.")
        else:
            to_delete[topic.topic_id] = index
            id_to_name[topic.topic_id] = name
    for topic_id, index in to_delete.items():
        name = id_to_name[topic_id]
        try:
            cluster.delete_topic(name)
            answer(index, name, topic_id, ErrorCode.NONE, None)
        except KafkaError as exc:
            answer(index, name, topic_id, exc.code, exc.message)
    return DeleteTopicsResponse(throttle_time_ms=0, responses=[answers[index] for index in sorted(answers)])
