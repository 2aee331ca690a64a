"""DescribeUserScramCredentials (50): each user's SCRAM mechanisms and iterations (KIP-554).

Version 0, the only one. Mirrors KafkaApis.handleDescribeUserScramCredentialsRequest and KRaft's
ScramImage.describe.

No users (null or empty) lists every user with a credential; a named user without one gets RESOURCE_NOT_FOUND,
a user named twice DUPLICATE_RESOURCE, each with Kafka's message. Salts and keys never leave the broker. It
needs DESCRIBE on the cluster, else DescribeUserScramCredentialsRequest.getErrorResponse.
"""

from __future__ import annotations

from ..core.acls import AclOperation
from ..protocol.errors import ErrorCode
from ..protocol.messages import DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse
from .context import RequestContext

API_KEY = 50
MIN_VERSION, MAX_VERSION = 0, 0

_Result = DescribeUserScramCredentialsResponse.DescribeUserScramCredentialsResult
_CredentialInfo = _Result.CredentialInfo
_DUPLICATE = "Cannot describe SCRAM credentials for the same user twice in a single request: "
_MISSING = "Attempt to describe a user credential that does not exist: "


def handle(request: DescribeUserScramCredentialsRequest,
           ctx: RequestContext) -> DescribeUserScramCredentialsResponse:
    if not ctx.authorize_cluster(AclOperation.DESCRIBE):
        # Errors.CLUSTER_AUTHORIZATION_FAILED.exception has the default text, so no message; one result per
        # user asked for, without the user's name (getErrorResponse never sets it), none for a null list
        # (on which Kafka's getErrorResponse itself fails)
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return DescribeUserScramCredentialsResponse(throttle_time_ms=0, error_code=code, error_message=None, results=[
            _Result(user="", error_code=code, error_message=None, credential_infos=[]) for _ in request.users or ()])
    known = ctx.cluster.credentials.scram_users()
    if not request.users:
        asked = {user: False for user in known}
    else:
        asked = {}
        for entry in request.users:
            asked[entry.name] = entry.name in asked  # True: named twice
    results = []
    for user, twice in asked.items():
        if twice:
            results.append(_Result(user=user, error_code=ErrorCode.DUPLICATE_RESOURCE, error_message=_DUPLICATE + user,
                                   credential_infos=[]))
        elif user not in known:
            results.append(_Result(user=user, error_code=ErrorCode.RESOURCE_NOT_FOUND, error_message=_MISSING + user,
                                   credential_infos=[]))
        else:
            infos = [_CredentialInfo(mechanism=mechanism.type, iterations=iterations)
                     for mechanism, iterations in known[user]]
            # "" rather than null where nothing failed, at the top too: ScramControlManager sets it so
            results.append(_Result(user=user, error_code=0, error_message="", credential_infos=infos))
    return DescribeUserScramCredentialsResponse(throttle_time_ms=0, error_code=0, error_message="",
                                                results=results)
