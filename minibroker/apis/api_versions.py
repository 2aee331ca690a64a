"""ApiVersions (18): the versions of every API this broker implements."""

from __future__ import annotations

import functools
import re
from typing import Any

from ..protocol.messages import ApiVersionsRequest, ApiVersionsResponse
from .context import RequestContext
from .releases import LATEST, served_range

API_KEY = 18
MIN_VERSION, MAX_VERSION = 0, 4

_SOFTWARE_NAME = r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?"


@functools.cache
def advertised_ranges(release_name: str = LATEST) -> list[tuple[int, int, int]]:
    """(api key, min, max) for each API a node of this release serves: the modules' own declarations,
    narrowed to the release's ranges (see releases.py)."""
    from . import API_MODULES

    ranges = []
    for key, module in sorted(API_MODULES.items()):
        implemented = (getattr(module, "ADVERTISED_MIN_VERSION", module.MIN_VERSION), module.MAX_VERSION)
        served = served_range(release_name, key, implemented)
        if served is not None:
            ranges.append((key, *served))
    return ranges


@functools.cache
def accepted_versions(release_name: str) -> dict[int, tuple[int, int]]:
    """Per API key, the versions a node of this release handles (advertised and implemented)."""
    from . import API_MODULES

    return {key: (max(low, API_MODULES[key].MIN_VERSION), high) for key, low, high in advertised_ranges(release_name)}


def _api_keys(release_name: str) -> list[Any]:
    return [ApiVersionsResponse.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, lo, hi in
            advertised_ranges(release_name)]


def handle(request: ApiVersionsRequest, ctx: RequestContext) -> ApiVersionsResponse:
    if ctx.api_version >= 3:
        for value in (request.client_software_name, request.client_software_version):
            if not re.fullmatch(_SOFTWARE_NAME, value or ""):
                return ApiVersionsResponse(error_code=42, api_keys=[], throttle_time_ms=0)
    return ApiVersionsResponse(error_code=0, api_keys=_api_keys(ctx.node.release), throttle_time_ms=0)


def unsupported_version_response(release_name: str = LATEST) -> ApiVersionsResponse:
    """The KIP-511 fallback: v0 body, UNSUPPORTED_VERSION, only this node's ApiVersions range."""
    low, high = accepted_versions(release_name)[API_KEY]
    entry = ApiVersionsResponse.ApiVersion(api_key=API_KEY, min_version=low, max_version=high)
    return ApiVersionsResponse(error_code=35, api_keys=[entry])
