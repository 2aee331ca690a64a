"""Committed offsets kept by group id apart from the groups (offset_metadata.py), through the coordinator."""

from __future__ import annotations

from minibroker.core.clock import ManualClock
from minibroker.core.config import BrokerConfig
from minibroker.core.group_coordinator import GroupCoordinator
from minibroker.protocol.errors import ErrorCode
from minibroker.testing import TEST_BROKER_CONFIG


def coordinator(**configs: str) -> GroupCoordinator:
    return GroupCoordinator(BrokerConfig({**TEST_BROKER_CONFIG, **configs}), ManualClock(),
                            lambda topic, partition: topic == "t")


def committed(c: GroupCoordinator, group_id: str) -> dict[tuple[str, int], int]:
    return {(topic, partition): offset.offset
            for topic, partition, offset in c.fetch_offsets(group_id, None) if offset is not None}


def test_a_deleted_group_takes_its_offsets_with_it():
    c = coordinator()
    c.commit_offsets("g", -1, "", None, [("t", 0, 5, -1, None)])
    assert c.delete_groups(["g"]) == [ErrorCode.NONE]
    assert committed(c, "g") == {}
    c.commit_offsets("g", -1, "", None, [("t", 1, 7, -1, None)])
    assert committed(c, "g") == {("t", 1): 7}


def test_transactional_offsets_show_only_once_the_transaction_commits():
    c = coordinator()
    assert c.commit_txn_offsets("g", 42, -1, "", None, [("t", 0, 5, -1, None), ("x", 0, 1, -1, None)]) == [
        ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    assert committed(c, "g") == {} and c.has_pending_txn_offset("g", "t", 0)
    assert c.delete_groups(["g"]) == [ErrorCode.NON_EMPTY_GROUP]
    c.complete_txn_offsets("g", 42, committed=True)
    assert committed(c, "g") == {("t", 0): 5} and not c.has_pending_txn_offset("g", "t", 0)


def test_an_aborted_transaction_drops_its_offsets_and_keeps_the_committed_ones():
    c = coordinator()
    c.commit_offsets("g", -1, "", None, [("t", 0, 3, -1, None)])
    c.commit_txn_offsets("g", 42, -1, "", None, [("t", 0, 5, -1, None)])
    c.complete_txn_offsets("g", 42, committed=False)
    assert committed(c, "g") == {("t", 0): 3} and not c.has_pending_txn_offset("g", "t", 0)


def test_expiry_keeps_a_group_whose_transaction_is_open():
    c = coordinator(**{"offsets.retention.minutes": "1"})
    c.commit_txn_offsets("g", 42, -1, "", None, [("t", 0, 5, -1, None)])
    c.clock.advance(60_000)
    c.expire_offsets()
    assert "g" in c.groups
    c.complete_txn_offsets("g", 42, committed=False)
    c.expire_offsets()
    assert "g" not in c.groups


def test_a_deleted_topic_loses_its_offsets_in_every_group():
    c = coordinator()
    c.commit_offsets("a", -1, "", None, [("t", 0, 5, -1, None)])
    c.commit_offsets("b", -1, "", None, [("t", 1, 6, -1, None)])
    c.forget_topic("t")
    assert committed(c, "a") == committed(c, "b") == {}
