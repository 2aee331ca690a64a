"""DeleteTopics (20): remove topics by name (v1-5) or by name or id (v6).

Authorized as ControllerApis.deleteTopics: DELETE on the cluster covers every topic; else a topic needs
DELETE on itself, and one the caller may not DESCRIBE is refused without saying whether it exists (a
name is TOPIC_AUTHORIZATION_FAILED before UNKNOWN_TOPIC_OR_PARTITION; an id resolved to such a topic
is answered without its name). Nothing refused is deleted.
"""

from __future__ import annotations

import uuid

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import DeleteTopicsRequest, DeleteTopicsResponse
from .context import RequestContext

API_KEY = 20
MIN_VERSION, MAX_VERSION = 1, 6

ZERO_UUID = uuid.UUID(int=0)
_Result = DeleteTopicsResponse.DeletableTopicResult
# new ApiError(TOPIC_AUTHORIZATION_FAILED) carries the error's default message
_NOT_AUTHORIZED = "Topic authorization failed."


def handle(request: DeleteTopicsRequest, ctx: RequestContext) -> DeleteTopicsResponse:
    cluster = ctx.cluster
    if ctx.api_version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    # the names to authorize: those given, and those the given ids resolve to
    names = {name if name is not None else cluster.topics_by_id[topic_id].name
             for name, topic_id in wanted if name is not None or topic_id in cluster.topics_by_id}
    if ctx.authorize_cluster(AclOperation.DELETE):
        describable = deletable = names
    else:
        describable = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, names)
        deletable = ctx.authorized_names(AclOperation.DELETE, ResourceType.TOPIC, names)
    results = []
    for name, topic_id in wanted:
        by_id = name is None and topic_id not in (None, ZERO_UUID)
        if by_id:
            topic = cluster.topics_by_id.get(topic_id)
            if topic is None:
                results.append(_Result(name=None, topic_id=topic_id, error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                                       error_message=None))
                continue
            name = topic.name
        try:
            if not cluster.config["delete.topic.enable"]:
                raise KafkaError(ErrorCode.TOPIC_DELETION_DISABLED, "Topic deletion is disabled.")
            if name is not None and _refused(name, by_id, describable, deletable, name in cluster.topics):
                results.append(_Result(name=name if not by_id or name in describable else None,
                                       topic_id=topic_id if by_id else ZERO_UUID,
                                       error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                       error_message=_NOT_AUTHORIZED))
                continue
            deleted = cluster.delete_topic(name or "")
            results.append(_Result(name=name, topic_id=deleted.topic_id, error_code=0, error_message=None))
        except KafkaError as exc:
            # a name resolved from an id is shown only to a caller who may describe the topic
            shown = name if not by_id or name in describable else None
            results.append(_Result(name=shown, topic_id=topic_id or ZERO_UUID, error_code=exc.code,
                                   error_message=exc.message))
    return DeleteTopicsResponse(throttle_time_ms=0, responses=results)


def _refused(name: str, by_id: bool, describable: set[str], deletable: set[str], exists: bool) -> bool:
    """Whether the caller may not delete the topic, in ControllerApis.deleteTopics' order.

    By id only DELETE counts (the id already resolved). By name, a topic the caller may not DESCRIBE is
    refused whether or not it exists; one it may describe but that does not exist is left to the deletion
    to answer UNKNOWN_TOPIC_OR_PARTITION; an existing one needs DELETE.
    """
    if by_id:
        return name not in deletable
    if name not in describable:
        return True
    return exists and name not in deletable
