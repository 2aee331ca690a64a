"""CreatePartitions (37): grow a topic's partition count, optionally on assigned replicas.

Versions 0-3: v1 is v0 (the answer may come before throttling); v2 is flexible; v3 may answer
THROTTLING_QUOTA_EXCEEDED (KIP-599). Mirrors ControllerApis.createPartitions and
ReplicationControlManager.createPartitions.

ControllerApis answers duplicate names itself, refuses the topics the caller may not ALTER
(TOPIC_AUTHORIZATION_FAILED, before anything is looked up) and hands the rest to the controller as one
operation, which answers each topic on its own: manual assignments are validated against the registered
brokers, and the new partitions of the whole request are bounded by the controller's records-per-operation
limit.
"""

from __future__ import annotations

from collections import Counter

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import CreatePartitionsRequest, CreatePartitionsResponse
from .context import RequestContext

API_KEY = 37
MIN_VERSION, MAX_VERSION = 0, 3

_Result = CreatePartitionsResponse.CreatePartitionsTopicResult


def handle(request: CreatePartitionsRequest, ctx: RequestContext) -> CreatePartitionsResponse:
    counts = Counter(t.name for t in request.topics)
    results = [_Result(name=name, error_code=ErrorCode.INVALID_REQUEST, error_message="Duplicate topic name.")
               for name, count in counts.items() if count > 1]
    unique = [t for t in request.topics if counts[t.name] == 1]
    alterable = ctx.authorized_names(AclOperation.ALTER, ResourceType.TOPIC, [t.name for t in unique])
    results += [_Result(name=t.name, error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED, error_message=None)
                for t in unique if t.name not in alterable]
    authorized = [t for t in unique if t.name in alterable]
    errors = ctx.cluster.replication.create_partitions_batch(
        [(t.name, t.count, None if t.assignments is None else [list(a.broker_ids) for a in t.assignments])
         for t in authorized],
        validate_only=request.validate_only)
    for wanted, error in zip(authorized, errors, strict=True):
        results.append(_Result(name=wanted.name, error_code=error.code if error else 0,
                               error_message=error.message if error else None))
    return CreatePartitionsResponse(throttle_time_ms=0, results=results)
