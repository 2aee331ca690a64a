"""DescribeCluster (60): cluster id, controller and brokers, as the Admin client reads them.

Versions 0-2: v1 adds the endpoint type (KIP-919) and may answer MISMATCHED_ENDPOINT_TYPE; v2 adds
IncludeFencedBrokers and each broker's IsFenced (KIP-1073). Mirrors KafkaApis.handleDescribeCluster and
AuthHelper.computeDescribeClusterResponse.

The cluster's authorized operations are answered when asked (none at all unless the caller may DESCRIBE the
cluster).
"""

from __future__ import annotations

from ..core.acls import CLUSTER_NAME, AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import DescribeClusterRequest, DescribeClusterResponse
from .authorized_operations import NOT_REQUESTED
from .context import RequestContext

API_KEY = 60
MIN_VERSION, MAX_VERSION = 0, 2

BROKERS_ENDPOINT = 1
CONTROLLERS_ENDPOINT = 2

_Broker = DescribeClusterResponse.DescribeClusterBroker


def handle(request: DescribeClusterRequest, ctx: RequestContext) -> DescribeClusterResponse:
    cluster = ctx.cluster
    refusal = _endpoint_refusal(request.endpoint_type)
    if refusal is not None:
        # only the code and the message; every other field keeps its schema default
        return DescribeClusterResponse(
            throttle_time_ms=0, error_code=refusal[0], error_message=refusal[1], endpoint_type=BROKERS_ENDPOINT,
            cluster_id="", controller_id=-1, brokers=[], authorized_operations=NOT_REQUESTED,
        )
    # AuthHelper.computeDescribeClusterResponse: the operations only for a caller that may DESCRIBE the cluster
    operations: set[int] | None = NOT_REQUESTED
    if request.include_cluster_authorized_operations:
        operations = (set(ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME))
                      if ctx.authorize_cluster(AclOperation.DESCRIBE) else set())
    return DescribeClusterResponse(
        throttle_time_ms=0, error_code=0, error_message=None, endpoint_type=BROKERS_ENDPOINT,
        cluster_id=cluster.cluster_id, controller_id=cluster.controller_id,
        brokers=[_Broker(broker_id=n.node_id, host=ctx.address(n)[0], port=ctx.address(n)[1], rack=n.rack,
                         is_fenced=False) for n in cluster.nodes],
        authorized_operations=operations,
    )


def _endpoint_refusal(endpoint_type: int) -> tuple[ErrorCode, str] | None:
    """AuthHelper.computeDescribeClusterResponse on a broker listener: an unknown type, then any other than BROKER.

    Version 0 has no endpoint type (always BROKER), so the v0 variant of these codes (INVALID_REQUEST)
    never applies.
    """
    if endpoint_type not in (BROKERS_ENDPOINT, CONTROLLERS_ENDPOINT):
        return ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, f"Unsupported endpoint type {endpoint_type}"
    if endpoint_type != BROKERS_ENDPOINT:
        return (ErrorCode.MISMATCHED_ENDPOINT_TYPE,
                "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER")
    return None
