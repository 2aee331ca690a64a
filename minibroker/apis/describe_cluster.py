"""DescribeCluster (60): cluster id, controller and brokers, as the Admin client reads them."""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import DescribeClusterRequest, DescribeClusterResponse
from .context import RequestContext

API_KEY = 60
MIN_VERSION, MAX_VERSION = 0, 2

BROKERS_ENDPOINT = 1
CONTROLLERS_ENDPOINT = 2
AUTHORIZED_OPERATIONS_OMITTED = None  # the engine encodes None as -2147483648 (not requested)

_Broker = DescribeClusterResponse.DescribeClusterBroker


def handle(request: DescribeClusterRequest, ctx: RequestContext) -> DescribeClusterResponse:
    cluster = ctx.cluster
    if ctx.api_version >= 1 and request.endpoint_type != BROKERS_ENDPOINT:
        # Controllers are not reachable through a broker listener, as in KRaft Kafka.
        return DescribeClusterResponse(
            throttle_time_ms=0, error_code=ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
            error_message="The target broker only supports broker endpoints.",
            endpoint_type=request.endpoint_type, cluster_id=cluster.cluster_id, controller_id=-1, brokers=[],
            authorized_operations=AUTHORIZED_OPERATIONS_OMITTED,
        )
    return DescribeClusterResponse(
        throttle_time_ms=0, error_code=0, error_message=None, endpoint_type=BROKERS_ENDPOINT,
        cluster_id=cluster.cluster_id, controller_id=cluster.controller_id,
        brokers=[_Broker(broker_id=n.node_id, host=n.host, port=n.port, rack=n.rack, is_fenced=False)
                 for n in cluster.nodes],
        authorized_operations=AUTHORIZED_OPERATIONS_OMITTED,
    )
