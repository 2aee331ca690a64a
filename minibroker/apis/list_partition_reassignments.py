"""ListPartitionReassignments (46): reassignments in progress; here they complete at once, so none."""

from __future__ import annotations

from ..protocol.messages import ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse
from .context import RequestContext

API_KEY = 46
MIN_VERSION, MAX_VERSION = 0, 0


def handle(request: ListPartitionReassignmentsRequest, ctx: RequestContext) -> ListPartitionReassignmentsResponse:
    return ListPartitionReassignmentsResponse(throttle_time_ms=0, error_code=0, error_message=None, topics=[])
