"""ApiVersions (18): the versions of every API this broker implements, and from v3 its feature flags.

Versions 0-4 (not v5, KIP-1242's cluster and node id checks): v1 adds the throttle time;
v3 is flexible and adds the client's software name and version (KIP-511) and the tagged SupportedFeatures,
FinalizedFeaturesEpoch and FinalizedFeatures (KIP-584); v4 (KIP-1022, KAFKA-17011) lists every supported
feature, where v3 leaves out those whose range starts at 0, as older clients cannot read such a range. Mirrors
KafkaApis.handleApiVersionsRequest and ApiVersionsResponse.createApiVersionsResponse.

The supported ranges are the node's release's (apis/releases.py), the finalized levels and their epoch the
cluster's (core/features.py: at start the levels every node's release has, or those chosen as `kafka-storage
format --feature` chooses; UpdateFeatures changes them and raises the epoch).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..protocol.messages import ApiVersionsRequest, ApiVersionsResponse
from .context import RequestContext
from .feature_levels import feature_levels
from .releases import LATEST, release

API_KEY = 18
MIN_VERSION, MAX_VERSION = 0, 4

FEATURES_FROM = 3  # KIP-584's tagged feature fields
ALL_SUPPORTED_FEATURES_FROM = 4  # KIP-1022: v3 leaves out supported features whose range starts at 0
NO_FINALIZED_FEATURES_EPOCH = -1  # Kafka's UNKNOWN_FINALIZED_FEATURES_EPOCH, sent when nothing is finalized

_SOFTWARE_NAME = r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?"


# (api key, min, max) of every API a node of a release serves; the registry (apis/__init__.py) sets it,
# so that this module, one of the registered ones, need not import the registry back
_advertised_ranges: Callable[[str], list[tuple[int, int, int]]] | None = None


def answer_with(advertised_ranges: Callable[[str], list[tuple[int, int, int]]]) -> None:
    """Called once by the registry of API modules: where ApiVersions finds what to advertise."""
    global _advertised_ranges
    _advertised_ranges = advertised_ranges


def _ranges(release_name: str) -> list[tuple[int, int, int]]:
    if _advertised_ranges is None:
        raise RuntimeError("minibroker.apis has not registered the API modules")
    return _advertised_ranges(release_name)


def _api_keys(release_name: str) -> list[Any]:
    return [ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, lo, hi in
            _ranges(release_name)]


def handle(request: ApiVersionsRequest, ctx: RequestContext) -> ApiVersionsResponse:
    if ctx.api_version >= 3:
        for value in (request.client_software_name, request.client_software_version):
            if not re.fullmatch(_SOFTWARE_NAME, value or ""):
                return ApiVersionsResponse(error_code=42, api_keys=[], throttle_time_ms=0)
    # Kafka 4.3.1 advertises ConsumerGroupHeartbeat and ConsumerGroupDescribe even without `consumer` in
    # group.coordinator.rebalance.protocols, and answers them UNSUPPORTED_VERSION then
    response = ApiVersionsResponse(error_code=0, api_keys=_api_keys(ctx.node.release), throttle_time_ms=0)
    if ctx.api_version >= FEATURES_FROM:
        _set_features(response, ctx)
    return response


def _set_features(response: ApiVersionsResponse, ctx: RequestContext) -> None:
    supported = release(ctx.node.release).features.supported
    if ctx.api_version < ALL_SUPPORTED_FEATURES_FROM:
        supported = tuple(entry for entry in supported if entry[1] > 0)
    response.supported_features = [ApiVersionsResponse.SupportedFeatureKey(name=name, min_version=low,
                                                                            max_version=high)
                                   for name, low, high in supported]
    levels = feature_levels(ctx.cluster)
    finalized = levels.finalized()
    response.finalized_features = [ApiVersionsResponse.FinalizedFeatureKey(name=name, max_version_level=level,
                                                                            min_version_level=level)
                                   for name, level in finalized]
    # a 2.8 ZooKeeper cluster has feature versioning on with nothing finalized: its epoch is still sent
    versioned = all(release(node.release).features.versioned for node in ctx.cluster.nodes)
    response.finalized_features_epoch = levels.epoch if finalized or versioned else NO_FINALIZED_FEATURES_EPOCH



def unsupported_version_response(release_name: str = LATEST) -> ApiVersionsResponse:
    """The KIP-511 fallback: v0 body, UNSUPPORTED_VERSION, only this node's ApiVersions range."""
    low, high = next((max(lo, MIN_VERSION), hi) for key, lo, hi in _ranges(release_name) if key == API_KEY)
    entry = ApiVersionsResponse.ApiVersion(api_key=API_KEY, min_version=low, max_version=high)
    return ApiVersionsResponse(error_code=35, api_keys=[entry])
