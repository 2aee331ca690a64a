"""Feature levels (core/features.py) as Kafka 4.3.1's FeatureControlManager and StorageTool decide them.

Every message below is what Kafka 4.3.1 answered: UpdateFeatures with validate_only against a node
formatted with Kafka's defaults, and real changes against one formatted with metadata.version 21.
"""

from __future__ import annotations

import pytest

from minibroker.core.features import (
    SAFE_DOWNGRADE,
    UNSAFE_DOWNGRADE,
    UPGRADE,
    FeatureLevels,
    FeatureUpdateError,
    NodeSupport,
    hash_map_order,
    initial_levels,
    parse_feature_flag,
)

SUPPORTED = {"eligible.leader.replicas.version": (0, 1), "group.version": (0, 1), "kraft.version": (0, 1),
             "metadata.version": (7, 30), "share.version": (0, 1), "streams.version": (0, 1),
             "transaction.version": (0, 2)}
DEFAULTS = {"eligible.leader.replicas.version": 1, "group.version": 1, "metadata.version": 30, "share.version": 1,
            "streams.version": 1, "transaction.version": 1}
FAILED = "The update failed for all features since the following feature had an error: "


def levels(start: dict[str, int] | None = None, *others: NodeSupport) -> FeatureLevels:
    node = NodeSupport(1, SUPPORTED)
    return FeatureLevels(DEFAULTS if start is None else start, node, [node, *others])


def refusal(features: FeatureLevels, *updates: tuple[str, int, int]) -> str:
    before = (features.finalized(), features.epoch)
    with pytest.raises(FeatureUpdateError) as caught:
        features.update(list(updates))
    assert (features.finalized(), features.epoch) == before  # nothing changes on refusal
    return str(caught.value).removeprefix(FAILED)


def test_upgrade_raises_the_epoch_and_finalizes_the_level() -> None:
    features = levels()
    features.update([("transaction.version", 2, UPGRADE)])
    assert dict(features.finalized())["transaction.version"] == 2
    assert features.epoch == 1


def test_validate_only_changes_nothing() -> None:
    features = levels()
    features.update([("transaction.version", 2, UPGRADE)], validate_only=True)
    assert dict(features.finalized())["transaction.version"] == 1 and features.epoch == 0


def test_downgrade_to_zero_removes_the_feature_from_the_finalized_list() -> None:
    features = levels()
    features.update([("group.version", 0, SAFE_DOWNGRADE)])
    assert "group.version" not in dict(features.finalized())


def test_unknown_feature_and_levels_out_of_range_are_refused_with_kafkas_messages() -> None:
    features = levels()
    assert refusal(features, ("foo.bar", 1, UPGRADE)) == \
        "Invalid update version 1 for feature foo.bar. Local controller 1 does not support this feature."
    assert refusal(features, ("foo.bar", 0, SAFE_DOWNGRADE)) == \
        "Invalid update version 0 for feature foo.bar. Feature foo.bar not found."
    assert refusal(features, ("metadata.version", 31, UPGRADE)) == \
        "Invalid update version 31 for feature metadata.version. Local controller 1 only supports versions 7-30"
    assert refusal(features, ("transaction.version", -1, SAFE_DOWNGRADE)) == \
        "Invalid update version -1 for feature transaction.version. A feature version cannot be less than 0."
    assert refusal(features, ("transaction.version", 2, 7)) == \
        "Invalid update version 2 for feature transaction.version. The controller does not support the given " \
        "upgrade type."


def test_another_node_without_the_feature_refuses_it_by_its_id() -> None:
    features = levels(None, NodeSupport(2, {}))
    assert refusal(features, ("transaction.version", 2, UPGRADE)) == \
        "Invalid update version 2 for feature transaction.version. Broker 2 does not support this feature."


def test_downgrade_needs_a_downgrade_type_and_a_downgrade_type_needs_a_lower_level() -> None:
    features = levels()
    assert refusal(features, ("metadata.version", 29, UPGRADE)) == \
        "Invalid update version 29 for feature metadata.version. Can't downgrade the version of this feature " \
        "without setting the upgrade type to either safe or unsafe downgrade."
    assert refusal(features, ("transaction.version", 2, SAFE_DOWNGRADE)) == \
        "Invalid update version 2 for feature transaction.version. Can't downgrade to a newer version."


def test_metadata_version_downgrade_across_a_metadata_change_is_refused_safe_or_unsafe() -> None:
    features = levels()
    assert refusal(features, ("metadata.version", 29, SAFE_DOWNGRADE)) == \
        "Unsupported metadata.version downgrade from 30 to 29. Refusing to perform the requested downgrade " \
        "because it might delete metadata information."
    assert refusal(features, ("metadata.version", 29, UNSAFE_DOWNGRADE)) == \
        "Unsupported metadata.version downgrade from 30 to 29. Unsafe metadata downgrade is not supported in " \
        "this version."


def test_metadata_version_downgrade_without_a_metadata_change_is_allowed() -> None:
    features = levels({"metadata.version": 25})
    features.update([("metadata.version", 24, SAFE_DOWNGRADE)])
    assert features.level("metadata.version") == 24
    assert refusal(features, ("metadata.version", 22, SAFE_DOWNGRADE)) == \
        "Unsupported metadata.version downgrade from 24 to 22. Refusing to perform the requested downgrade " \
        "because it might delete metadata information."


def test_eligible_leader_replicas_depends_on_metadata_version_23_even_in_the_same_request() -> None:
    features = levels({"metadata.version": 21})
    assert refusal(features, ("eligible.leader.replicas.version", 1, UPGRADE)) == \
        "Invalid update version 1 for feature eligible.leader.replicas.version. eligible.leader.replicas.version " \
        "could not be set to 1 because it depends on metadata.version level 23"
    features.update([("eligible.leader.replicas.version", 1, UPGRADE), ("metadata.version", 23, UPGRADE)])
    assert dict(features.finalized()) == {"eligible.leader.replicas.version": 1, "metadata.version": 23}


def test_a_feature_named_twice_counts_once_with_its_last_level() -> None:
    features = levels()
    features.update([("transaction.version", 5, UPGRADE), ("transaction.version", 2, UPGRADE)])
    assert features.level("transaction.version") == 2


def test_of_two_refusals_the_first_in_java_hash_map_order_is_answered() -> None:
    assert hash_map_order(["zzz", "aaa"]) == ["aaa", "zzz"]
    features = levels()
    assert refusal(features, ("zzz", 1, UPGRADE), ("aaa", 1, UPGRADE)).startswith(
        "Invalid update version 1 for feature aaa.")


def test_initial_levels_follow_kafka_storage_format() -> None:
    assert initial_levels(DEFAULTS, SUPPORTED, {}) == DEFAULTS
    assert initial_levels(DEFAULTS, SUPPORTED, {"transaction.version": 2})["transaction.version"] == 2
    assert initial_levels(DEFAULTS, SUPPORTED, {"metadata.version": 21}) == {"metadata.version": 21}
    assert initial_levels(DEFAULTS, SUPPORTED, {"metadata.version": 25}) == \
        {"metadata.version": 25, "group.version": 1, "transaction.version": 1}
    assert "group.version" not in initial_levels(DEFAULTS, SUPPORTED, {"group.version": 0})


@pytest.mark.parametrize(("chosen", "message"), [
    ({"foo.bar": 1}, "Unsupported feature: foo.bar. Supported features are: eligible.leader.replicas.version, "
                     "group.version, kraft.version, share.version, streams.version, transaction.version"),
    ({"group.version": 5}, "No feature:group.version with feature level 5"),
    ({"metadata.version": 5}, "No MetadataVersion with feature level 5. Valid feature levels are from 7 to 31."),
    ({"metadata.version": 31}, "metadata.version 4.4-IV0 is not yet stable."),
    ({"eligible.leader.replicas.version": 1, "metadata.version": 21},
     "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23"),
])
def test_bad_initial_levels_are_refused_with_storage_tools_messages(chosen: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace(".", r"\.") + "$"):
        initial_levels(DEFAULTS, SUPPORTED, chosen)


def test_feature_flags_parse_as_storage_tool_parses_them() -> None:
    assert parse_feature_flag("transaction.version=2") == ("transaction.version", 2)
    with pytest.raises(ValueError, match="^Can't parse feature=level string transaction.version: equals sign not"):
        parse_feature_flag("transaction.version")
    with pytest.raises(ValueError, match="unable to parse abc as a short.$"):
        parse_feature_flag("transaction.version=abc")
