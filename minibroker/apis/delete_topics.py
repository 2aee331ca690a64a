"""DeleteTopics (20): remove topics by name (v1-5) or by name or id (v6)."""

from __future__ import annotations

import uuid

from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import DeleteTopicsRequest, DeleteTopicsResponse
from .context import RequestContext

API_KEY = 20
MIN_VERSION, MAX_VERSION = 1, 6

ZERO_UUID = uuid.UUID(int=0)
_Result = DeleteTopicsResponse.DeletableTopicResult


def handle(request: DeleteTopicsRequest, ctx: RequestContext) -> DeleteTopicsResponse:
    cluster = ctx.cluster
    if ctx.api_version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    results = []
    for name, topic_id in wanted:
        if name is None and topic_id not in (None, ZERO_UUID):
            topic = cluster.topics_by_id.get(topic_id)
            if topic is None:
                results.append(_Result(name=None, topic_id=topic_id, error_code=ErrorCode.UNKNOWN_TOPIC_ID,
                                       error_message=None))
                continue
            name = topic.name
        try:
            if not cluster.config["delete.topic.enable"]:
                raise KafkaError(ErrorCode.TOPIC_DELETION_DISABLED, "Topic deletion is disabled.")
            deleted = cluster.delete_topic(name or "")
            results.append(_Result(name=name, topic_id=deleted.topic_id, error_code=0, error_message=None))
        except KafkaError as exc:
            results.append(_Result(name=name, topic_id=topic_id or ZERO_UUID, error_code=exc.code,
                                   error_message=exc.message))
    return DeleteTopicsResponse(throttle_time_ms=0, responses=results)
