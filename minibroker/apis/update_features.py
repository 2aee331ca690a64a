"""UpdateFeatures (57): change the cluster's finalized feature levels (KIP-584).

Versions 0-2: v0 has AllowDowngrade per feature (true means a safe downgrade); v1 replaces it with UpgradeType
(1 upgrade, 2 safe downgrade, 3 unsafe downgrade) and adds ValidateOnly; v0-1 answer a result per feature (each
with the top-level code and message, in the request's order; none when the request failed), v2 none. Served
by the releases that advertise it (3.9 and later here: apis/releases.py). Mirrors
ControllerApis.handleUpdateFeatures with QuorumController/FeatureControlManager's checks as Kafka 4.3.1 answers
them (core/features.py).

It is what `kafka-features upgrade/downgrade` and the Admin's updateFeatures send. Refused: a feature the
nodes' software does not support, a level outside its range, a downgrade without a downgrade type, a
"downgrade" to a higher level, metadata.version downgrades that might lose metadata (unsafe ones are refused
too: Kafka 4.3.1 does not implement them), and the dependencies between features. One refusal fails the whole
request with INVALID_UPDATE_VERSION and the message "The update failed for all features since the following
feature had an error: ...", and nothing changes. A change is seen by clients as a higher FinalizedFeaturesEpoch
in ApiVersions. Needs ALTER on the cluster.
"""

from __future__ import annotations

from ..core.acls import AclOperation
from ..core.features import SAFE_DOWNGRADE, UPGRADE, FeatureUpdateError
from ..protocol.errors import ErrorCode
from ..protocol.messages import UpdateFeaturesRequest, UpdateFeaturesResponse
from .context import RequestContext
from .feature_levels import feature_levels

API_KEY = 57
MIN_VERSION, MAX_VERSION = 0, 2

RESULTS_UNTIL = 1  # v2 dropped the per-feature results
_NO_ERROR_MESSAGE = "NONE"  # ApiError.NONE.message(), which v0-1 put in each feature's result


def handle(request: UpdateFeaturesRequest, ctx: RequestContext) -> UpdateFeaturesResponse:
    updates = [(update.feature, update.max_version_level, _upgrade_type(update, ctx.api_version))
               for update in request.feature_updates]
    if not ctx.authorize_cluster(AclOperation.ALTER):
        return _answer(ctx, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.", [])
    validate_only = bool(ctx.api_version >= 1 and request.validate_only)
    try:
        feature_levels(ctx.cluster).update(updates, validate_only=validate_only)
    except FeatureUpdateError as refusal:
        return _answer(ctx, ErrorCode.INVALID_UPDATE_VERSION, str(refusal), [])
    return _answer(ctx, ErrorCode.NONE, None, list(dict.fromkeys(name for name, _, _ in updates)))


def _upgrade_type(update: UpdateFeaturesRequest.FeatureUpdateKey, version: int) -> int:
    if version == 0:
        return SAFE_DOWNGRADE if update.allow_downgrade else UPGRADE
    return int(update.upgrade_type)


def _answer(ctx: RequestContext, code: ErrorCode, message: str | None, features: list[str]) -> UpdateFeaturesResponse:
    response = UpdateFeaturesResponse(throttle_time_ms=0, error_code=code, error_message=message)
    if ctx.api_version <= RESULTS_UNTIL:
        response.results = [UpdateFeaturesResponse.UpdatableFeatureResult(
            feature=name, error_code=code, error_message=message if message is not None else _NO_ERROR_MESSAGE)
            for name in features]
    return response
