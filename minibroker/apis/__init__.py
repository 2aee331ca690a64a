"""One module per Kafka API; each declares the versions it serves and one `handle`."""

from __future__ import annotations

from types import ModuleType

from . import (
    alter_configs,
    api_versions,
    create_partitions,
    create_topics,
    delete_records,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_producers,
    describe_topic_partitions,
    fetch,
    incremental_alter_configs,
    init_producer_id,
    list_offsets,
    metadata,
    offset_for_leader_epoch,
    produce,
)

API_MODULES: dict[int, ModuleType] = {
    module.API_KEY: module
    for module in (
        produce, fetch, list_offsets, metadata, offset_for_leader_epoch, api_versions, create_topics,
        delete_topics, delete_records, init_producer_id, describe_configs, alter_configs, create_partitions,
        incremental_alter_configs, describe_cluster, describe_producers, describe_topic_partitions,
    )
}
