"""ApiVersions (18): the versions of every API this broker implements."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..core.consumer_groups import consumer_protocol_enabled
from ..protocol.messages import ApiVersionsRequest, ApiVersionsResponse
from .context import RequestContext
from .releases import LATEST

API_KEY = 18
MIN_VERSION, MAX_VERSION = 0, 4

CONSUMER_PROTOCOL_API_KEYS = frozenset({68, 69})  # ConsumerGroupHeartbeat, ConsumerGroupDescribe
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
    keys = _api_keys(ctx.node.release)
    if not consumer_protocol_enabled(ctx.cluster.config):
        # ApiVersionsManager leaves out the KIP-848 APIs unless group.coordinator.rebalance.protocols has `consumer`
        keys = [entry for entry in keys if entry.api_key not in CONSUMER_PROTOCOL_API_KEYS]
    return ApiVersionsResponse(error_code=0, api_keys=keys, throttle_time_ms=0)


def unsupported_version_response(release_name: str = LATEST) -> ApiVersionsResponse:
    """The KIP-511 fallback: v0 body, UNSUPPORTED_VERSION, only this node's ApiVersions range."""
    low, high = next((max(lo, MIN_VERSION), hi) for key, lo, hi in _ranges(release_name) if key == API_KEY)
    entry = ApiVersionsResponse.ApiVersion(api_key=API_KEY, min_version=low, max_version=high)
    return ApiVersionsResponse(error_code=35, api_keys=[entry])
