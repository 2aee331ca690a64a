"""Shared by the transaction APIs: the coordinator check, the transactional id's WRITE check and Kafka's
per-version error downgrades."""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..core.cluster import Cluster
from ..core.cluster_model import TRANSACTION_STATE_TOPIC
from ..protocol.errors import ErrorCode
from .context import RequestContext
from .feature_levels import feature_levels

TRANSACTION_VERSION = "transaction.version"


def transaction_version(ctx: RequestContext) -> int:
    """The cluster's finalized `transaction.version` (0 when not finalized), which clients read from ApiVersions
    to choose transactions V1 or V2. Kafka's coordinator follows each request's version, not this level."""
    return cluster_transaction_version(ctx.cluster)


def cluster_transaction_version(cluster: Cluster) -> int:
    """`transaction.version` as the cluster finalizes it now (0 when not): at start the lowest its nodes' releases
    finalize or the level `--feature` chose, then as UpdateFeatures changed it (apis/feature_levels.py)."""
    return feature_levels(cluster).level(TRANSACTION_VERSION)


def coordinator_error(ctx: RequestContext, transactional_id: str) -> ErrorCode | None:
    """NOT_COORDINATOR when this node does not coordinate `transactional_id`, else None."""
    if ctx.cluster.coordinator_node(transactional_id, TRANSACTION_STATE_TOPIC).node_id != ctx.node.node_id:
        return ErrorCode.NOT_COORDINATOR
    return None


def may_write(ctx: RequestContext, transactional_id: str) -> bool:
    """Whether the caller has WRITE on `transactional_id`, which every client transaction request needs first."""
    return ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id)


def for_version(error: ErrorCode, version: int, fenced_from: int) -> ErrorCode:
    """PRODUCER_FENCED (KIP-588) is INVALID_PRODUCER_EPOCH for request versions that predate it."""
    if error is ErrorCode.PRODUCER_FENCED and version < fenced_from:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return error
