"""The cluster's feature levels built from its nodes' releases: what ApiVersions, UpdateFeatures and the
transaction code read (core/features.py holds the state and Kafka's rules)."""

from __future__ import annotations

from collections.abc import Mapping

from ..core.cluster import Cluster
from ..core.features import FeatureLevels, NodeSupport, initial_levels
from .releases import release

TRANSACTION_VERSION = "transaction.version"


def new_feature_levels(cluster: Cluster, chosen: Mapping[str, int] | None = None) -> FeatureLevels:
    """The levels a cluster of these nodes starts with: the lowest level every node's release finalizes (a
    feature some release lacks is not finalized), changed by `chosen` as `kafka-storage format --feature` would;
    ValueError with StorageTool's message for a bad choice."""
    releases = [release(node.release).features for node in cluster.nodes]
    defaults = {name: min(dict(features.finalized).get(name, 0) for features in releases)
                for name, _ in releases[0].finalized}
    supports = [NodeSupport(node.node_id, {name: (low, high) for name, low, high in
                                           release(node.release).features.supported})
                for node in cluster.nodes]
    controller = next(support for support in supports if support.node_id == cluster.controller_id)
    return FeatureLevels(initial_levels(defaults, controller.ranges, dict(chosen or {})), controller, supports)


def feature_levels(cluster: Cluster) -> FeatureLevels:
    """The cluster's feature levels, made from its nodes' releases on first use."""
    if cluster.features is None:
        cluster.features = new_feature_levels(cluster)
    return cluster.features


def transaction_version(cluster: Cluster) -> int:
    """The finalized transaction.version: 2 means transactions V2 (KIP-890)."""
    return feature_levels(cluster).level(TRANSACTION_VERSION)
