"""ApiVersions (18): the versions of every API this broker implements, and from v3 its feature flags.

Versions 0-4 (not v5, KIP-1242's cluster and node id checks): v1 adds the throttle time;
v3 is flexible and adds the client's software name and version (KIP-511) and the tagged SupportedFeatures,
FinalizedFeaturesEpoch and FinalizedFeatures (KIP-584); v4 (KIP-1022, KAFKA-17011) lists every supported
feature, where v3 leaves out those whose range starts at 0, as older clients cannot read such a range. Mirrors
KafkaApis.handleApiVersionsRequest and ApiVersionsResponse.createApiVersionsResponse.

The supported ranges are the node's release's (apis/releases.py), the finalized levels and their epoch the
cluster's (core/features.py: at start the levels every node's release has, or those chosen as `kafka-storage
format --feature` chooses; UpdateFeatures changes them and raises the epoch).

Every connection opens with this request, so an answer is built and encoded once per (release, version, feature
state) and then sent as stored bytes: building and encoding its 60-odd entries cost about 0.8 ms, long enough for
librdkafka's first idempotent producer to miss its PID and wait out a 500 ms timer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

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


class AnswerKey(NamedTuple):
    """What a successful answer depends on: the node's release, the version, and from v3 the cluster's features."""

    release_name: str
    version: int
    finalized: tuple[tuple[str, int], ...] = ()
    finalized_epoch: int = NO_FINALIZED_FEATURES_EPOCH


class StoredAnswer(NamedTuple):
    response: ApiVersionsResponse  # shared by every request with the same key: never changed after it is built
    body: bytes


#: AnswerKey -> its answer; a handful per cluster (releases x versions), one more per UpdateFeatures
_answers: dict[AnswerKey, StoredAnswer] = {}
#: id(response) -> its answer, for `encode_body`; the entry keeps its response alive, so no other object takes its id
_by_identity: dict[int, StoredAnswer] = {}
_MAX_STORED_ANSWERS = 256


def handle(request: ApiVersionsRequest, ctx: RequestContext) -> ApiVersionsResponse:
    if ctx.api_version >= 3:
        for value in (request.client_software_name, request.client_software_version):
            if not re.fullmatch(_SOFTWARE_NAME, value or ""):
                return ApiVersionsResponse(error_code=42, api_keys=[], throttle_time_ms=0)
    key = answer_key(ctx)
    stored = _answers.get(key)
    if stored is None:
        if len(_answers) >= _MAX_STORED_ANSWERS:
            _answers.clear()
            _by_identity.clear()
        response = _build(key)
        stored = _answers[key] = StoredAnswer(response, bytes(response.encode(version=key.version)))
        _by_identity[id(response)] = stored
    return stored.response


def encode_body(response: ApiVersionsResponse, version: int) -> bytes | None:
    """The stored bytes of an answer `handle` returned (dispatch.encode_response); None for any other (a refusal)."""
    stored = _by_identity.get(id(response))
    return stored.body if stored is not None and stored.response is response else None


def answer_key(ctx: RequestContext) -> AnswerKey:
    if ctx.api_version < FEATURES_FROM:
        return AnswerKey(ctx.node.release, ctx.api_version)
    levels = feature_levels(ctx.cluster)
    finalized = levels.finalized()
    # a 2.8 ZooKeeper cluster has feature versioning on with nothing finalized: its epoch is still sent
    versioned = all(release(node.release).features.versioned for node in ctx.cluster.nodes)
    epoch = levels.epoch if finalized or versioned else NO_FINALIZED_FEATURES_EPOCH
    return AnswerKey(ctx.node.release, ctx.api_version, finalized, epoch)


def _build(key: AnswerKey) -> ApiVersionsResponse:
    # Kafka 4.3.1 advertises ConsumerGroupHeartbeat and ConsumerGroupDescribe even without `consumer` in
    # group.coordinator.rebalance.protocols, and answers them UNSUPPORTED_VERSION then
    response = ApiVersionsResponse(error_code=0, api_keys=_api_keys(key.release_name), throttle_time_ms=0)
    if key.version < FEATURES_FROM:
        return response
    supported = release(key.release_name).features.supported
    if key.version < ALL_SUPPORTED_FEATURES_FROM:
        supported = tuple(entry for entry in supported if entry[1] > 0)
    response.supported_features = [ApiVersionsResponse.SupportedFeatureKey(name=name, min_version=low,
                                                                            max_version=high)
                                   for name, low, high in supported]
    response.finalized_features = [ApiVersionsResponse.FinalizedFeatureKey(name=name, max_version_level=level,
                                                                            min_version_level=level)
                                   for name, level in key.finalized]
    response.finalized_features_epoch = key.finalized_epoch
    return response



def unsupported_version_response(release_name: str = LATEST) -> ApiVersionsResponse:
    """The KIP-511 fallback: v0 body, UNSUPPORTED_VERSION, only this node's ApiVersions range."""
    low, high = next((max(lo, MIN_VERSION), hi) for key, lo, hi in _ranges(release_name) if key == API_KEY)
    entry = ApiVersionsResponse.ApiVersion(api_key=API_KEY, min_version=low, max_version=high)
    return ApiVersionsResponse(error_code=35, api_keys=[entry])
