"""One module per Kafka API; each declares the versions it serves and one `handle`."""

from __future__ import annotations

import functools
from types import ModuleType

from . import (
    add_offsets_to_txn,
    add_partitions_to_txn,
    alter_configs,
    alter_partition_reassignments,
    alter_replica_log_dirs,
    alter_user_scram_credentials,
    api_versions,
    consumer_group_describe,
    consumer_group_heartbeat,
    create_acls,
    create_partitions,
    create_topics,
    delete_acls,
    delete_groups,
    delete_records,
    delete_topics,
    describe_acls,
    describe_cluster,
    describe_configs,
    describe_groups,
    describe_log_dirs,
    describe_producers,
    describe_topic_partitions,
    describe_transactions,
    describe_user_scram_credentials,
    elect_leaders,
    end_txn,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_config_resources,
    list_groups,
    list_offsets,
    list_partition_reassignments,
    list_transactions,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sasl_authenticate,
    sasl_handshake,
    sync_group,
    txn_offset_commit,
    update_features,
)
from .releases import LATEST, release, served_range

API_MODULES: dict[int, ModuleType] = {
    module.API_KEY: module
    for module in (
        produce, fetch, list_offsets, metadata, offset_for_leader_epoch, api_versions, create_topics,
        delete_topics, delete_records, init_producer_id, describe_configs, alter_configs, create_partitions,
        incremental_alter_configs, describe_cluster, describe_producers, describe_topic_partitions,
        find_coordinator, join_group, sync_group, heartbeat, leave_group, offset_commit, offset_fetch,
        describe_groups, list_groups, delete_groups, offset_delete,
        add_partitions_to_txn, add_offsets_to_txn, end_txn, txn_offset_commit, describe_transactions,
        list_transactions, elect_leaders, alter_partition_reassignments, list_partition_reassignments,
        describe_log_dirs, describe_acls, create_acls, delete_acls, sasl_handshake, sasl_authenticate,
        describe_user_scram_credentials, alter_user_scram_credentials,
        consumer_group_heartbeat, consumer_group_describe, alter_replica_log_dirs, list_config_resources,
        update_features,
    )
}


@functools.cache
def advertised_ranges(release_name: str = LATEST) -> list[tuple[int, int, int]]:
    """(api key, min, max) for each API a node of this release serves: the modules' own declarations,
    narrowed to the release's ranges (see releases.py)."""
    ranges = []
    for key, module in sorted(API_MODULES.items()):
        implemented = (min(getattr(module, "ADVERTISED_MIN_VERSION", module.MIN_VERSION),
                           _min_version(module, release_name)), module.MAX_VERSION)
        served = served_range(release_name, key, implemented)
        if served is not None:
            ranges.append((key, *served))
    return ranges


@functools.cache
def accepted_versions(release_name: str) -> dict[int, tuple[int, int]]:
    """Per API key, the versions a node of this release handles (advertised and implemented)."""
    return {key: (max(low, _min_version(API_MODULES[key], release_name)), high)
            for key, low, high in advertised_ranges(release_name)}


def _min_version(module: ModuleType, release_name: str) -> int:
    """The lowest version a node of the release serves: releases before 4.0 still served the versions KIP-896
    removed, which a module that implements them names in PRE_KIP896_MIN_VERSION."""
    if not release(release_name).kip896:
        return int(getattr(module, "PRE_KIP896_MIN_VERSION", module.MIN_VERSION))
    return int(module.MIN_VERSION)


api_versions.answer_with(advertised_ranges)
