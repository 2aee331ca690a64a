"""AlterUserScramCredentials (51): create, replace and delete SCRAM credentials (KIP-554).

Version 0, the only one. Mirrors ControllerApis.handleAlterUserScramCredentials and KRaft's
ScramControlManager.alterCredentials.

A user altered twice in one request (deletion or upsertion, whatever the mechanism) gets DUPLICATE_RESOURCE and
nothing of it changes; each other change is validated (empty user, unknown mechanism, iterations outside the
mechanism's bounds, deleting what does not exist) and the valid ones are applied together. It needs ALTER on
the cluster: a refused request changes nothing and is answered as
AlterUserScramCredentialsRequest.getErrorResponse answers it.
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation
from ..core.credentials import CredentialError, validate_scram_upsertion
from ..protocol.errors import ErrorCode
from ..protocol.messages import AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse
from .context import RequestContext

API_KEY = 51
MIN_VERSION, MAX_VERSION = 0, 0

_Result = AlterUserScramCredentialsResponse.AlterUserScramCredentialsResult
_TWICE = CredentialError(ErrorCode.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request")


def handle(request: AlterUserScramCredentialsRequest, ctx: RequestContext) -> AlterUserScramCredentialsResponse:
    if not ctx.authorize_cluster(AclOperation.ALTER):
        # each user named, once and sorted; Kafka's message is its ClusterAuthorizationException's Java
        # object dump, null lets the client show the error's own text
        users = sorted({d.name for d in request.deletions} | {u.name for u in request.upsertions})
        return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=[
            _Result(user=user, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message=None)
            for user in users])
    store = ctx.cluster.credentials
    deletions: dict[str, Any] = {}
    upsertions: dict[str, Any] = {}
    errors: dict[str, CredentialError] = {}
    for deletion in request.deletions:
        if deletion.name in errors:
            continue
        if deletions.pop(deletion.name, None) is not None:
            errors[deletion.name] = _TWICE
        elif (error := store.validate_scram_deletion(deletion.name, deletion.mechanism)) is not None:
            errors[deletion.name] = error
        else:
            deletions[deletion.name] = deletion
    for upsertion in request.upsertions:
        if upsertion.name in errors:
            continue
        if deletions.pop(upsertion.name, None) is not None or upsertions.pop(upsertion.name, None) is not None:
            errors[upsertion.name] = _TWICE
        elif (error := validate_scram_upsertion(upsertion.name, upsertion.mechanism, upsertion.iterations)) is not None:
            errors[upsertion.name] = error
        else:
            upsertions[upsertion.name] = upsertion
    results = []
    for name, deletion in deletions.items():
        store.delete_scram(name, deletion.mechanism)
        results.append(_Result(user=name, error_code=0, error_message=None))
    for name, upsertion in upsertions.items():
        store.upsert_scram(name, upsertion.mechanism, upsertion.iterations, bytes(upsertion.salt),
                           bytes(upsertion.salted_password))
        results.append(_Result(user=name, error_code=0, error_message=None))
    for name, error in errors.items():
        results.append(_Result(user=name, error_code=error.error, error_message=error.message))
    return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=results)
