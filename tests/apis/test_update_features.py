"""UpdateFeatures (57) as Kafka 4.3.1 answers it, and its changes seen through ApiVersions' epoch.

Kafka 4.3.1 (one node, id 1, formatted with its defaults) answered these requests with validate_only;
the real changes were checked on a node of its own (apis/update_features.py, core/features.py).
"""

from __future__ import annotations

from typing import Any

from minibroker.apis import advertised_ranges
from minibroker.core.acls import AclOperation, ResourceType
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import Node
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import ApiVersionsRequest, UpdateFeaturesRequest

from .authz import allow, call, secured_cluster

Update = UpdateFeaturesRequest.FeatureUpdateKey
FAILED = "The update failed for all features since the following feature had an error: "


def cluster(*releases: str) -> Cluster:
    nodes = [Node(1 + i, "127.0.0.1", 9092 + i, release=name) for i, name in enumerate(releases or ("latest",))]
    return Cluster(BrokerConfig({"node.id": 1}), clock=ManualClock(1_700_000_000_000), nodes=nodes)


def update(target: Cluster, *updates: Any, version: int = 2, validate_only: bool = False,
           principal: str = "User:alice") -> Any:
    request = UpdateFeaturesRequest(timeout_ms=60000, feature_updates=list(updates), validate_only=validate_only)
    return call(target, request, version, principal=principal)


def finalized(target: Cluster) -> tuple[int, dict[str, int]]:
    answer = call(target, ApiVersionsRequest(client_software_name="t", client_software_version="1"), 4)
    return answer.finalized_features_epoch, {f.name: f.max_version_level for f in answer.finalized_features}


def test_upgrade_is_seen_in_api_versions_with_a_higher_epoch() -> None:
    target = cluster()
    epoch, before = finalized(target)
    answer = update(target, Update(feature="group.version", max_version_level=0, upgrade_type=2))
    assert (answer.error_code, answer.error_message) == (0, None)
    later_epoch, after = finalized(target)
    assert later_epoch > epoch
    assert after == {name: level for name, level in before.items() if name != "group.version"}


def test_validate_only_answers_as_a_change_but_changes_nothing() -> None:
    target = cluster()
    before = finalized(target)
    answer = update(target, Update(feature="group.version", max_version_level=0, upgrade_type=2), validate_only=True)
    assert answer.error_code == 0
    assert finalized(target) == before


def test_refusal_is_invalid_update_version_with_kafkas_message_and_changes_nothing() -> None:
    target = cluster()
    before = finalized(target)
    answer = update(target, Update(feature="metadata.version", max_version_level=29, upgrade_type=3),
                    Update(feature="group.version", max_version_level=0, upgrade_type=2))
    assert answer.error_code == ErrorCode.INVALID_UPDATE_VERSION
    assert answer.error_message == FAILED + ("Unsupported metadata.version downgrade from 30 to 29. Unsafe metadata "
                                             "downgrade is not supported in this version.")
    assert finalized(target) == before


def test_v1_lists_a_result_per_feature_on_success_and_none_on_refusal() -> None:
    target = cluster()
    ok = update(target, Update(feature="transaction.version", max_version_level=2, upgrade_type=1), version=1,
                validate_only=True)
    assert [(r.feature, r.error_code, r.error_message) for r in ok.results] == [("transaction.version", 0, "NONE")]
    both = update(target, Update(feature="transaction.version", max_version_level=2, upgrade_type=1),
                  Update(feature="group.version", max_version_level=0, upgrade_type=2), version=1, validate_only=True)
    assert [r.feature for r in both.results] == ["transaction.version", "group.version"]  # the request's order
    refused = update(target, Update(feature="foo.bar", max_version_level=1, upgrade_type=1), version=1,
                     validate_only=True)
    assert (refused.error_code, refused.results) == (95, [])
    assert refused.error_message == FAILED + ("Invalid update version 1 for feature foo.bar. Local controller 1 "
                                              "does not support this feature.")


def test_v0_without_allow_downgrade_refuses_a_downgrade() -> None:
    target = cluster()
    answer = update(target, Update(feature="metadata.version", max_version_level=29, allow_downgrade=False),
                    version=0)
    assert answer.error_message == FAILED + (
        "Invalid update version 29 for feature metadata.version. Can't downgrade the version of this feature "
        "without setting the upgrade type to either safe or unsafe downgrade.")


def test_a_node_whose_release_lacks_the_feature_refuses_the_upgrade() -> None:
    target = cluster("latest", "4.1")  # 4.1 has no streams.version
    answer = update(target, Update(feature="streams.version", max_version_level=1, upgrade_type=1))
    assert answer.error_message == FAILED + ("Invalid update version 1 for feature streams.version. Broker 2 does "
                                             "not support this feature.")


def test_needs_alter_on_the_cluster() -> None:
    target = secured_cluster()
    before = finalized(target)
    denied = update(target, Update(feature="group.version", max_version_level=0, upgrade_type=2))
    assert denied.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert finalized(target) == before
    allow(target, "User:alice", AclOperation.ALTER, ResourceType.CLUSTER, "kafka-cluster")
    assert update(target, Update(feature="group.version", max_version_level=0, upgrade_type=2)).error_code == 0


def test_served_as_each_release_served_it() -> None:
    assert (57, 0, 2) in advertised_ranges("4.0")
    assert (57, 0, 2) in advertised_ranges("latest")
    assert (57, 0, 1) in advertised_ranges("3.9")  # v2 came with 4.0
    assert (57, 0, 0) in advertised_ranges("2.8")  # as Kafka 2.8.2 (ZooKeeper mode) advertised it
