"""CreatePartitions (37): grow a topic's partition count."""

from __future__ import annotations

from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import CreatePartitionsRequest, CreatePartitionsResponse
from .context import RequestContext

API_KEY = 37
MIN_VERSION, MAX_VERSION = 0, 3

_Result = CreatePartitionsResponse.CreatePartitionsTopicResult


def handle(request: CreatePartitionsRequest, ctx: RequestContext) -> CreatePartitionsResponse:
    names = [t.name for t in request.topics]
    results = []
    for wanted in request.topics:
        try:
            if names.count(wanted.name) > 1:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Duplicate topic in request.")
            ctx.cluster.create_partitions(wanted.name, wanted.count, validate_only=request.validate_only)
            results.append(_Result(name=wanted.name, error_code=0, error_message=None))
        except KafkaError as exc:
            results.append(_Result(name=wanted.name, error_code=exc.code, error_message=exc.message))
    return CreatePartitionsResponse(throttle_time_ms=0, results=results)
