"""The Cluster builds its group coordinator, its share state and its credential store on first use (issue 27),
doing what one built at start-up does: a bad consumer-group or share-group config still refuses the start, and
offsets expire on the sweeps a coordinator built at start-up would have run."""

from __future__ import annotations

import subprocess
import sys

import pytest

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig, ConfigError
from minibroker.testing import TEST_BROKER_CONFIG


def cluster(**configs: str) -> Cluster:
    return Cluster(BrokerConfig({**TEST_BROKER_CONFIG, **configs}), ManualClock())


def test_a_bad_consumer_group_config_refuses_the_cluster_at_once() -> None:
    with pytest.raises(ConfigError, match="group.consumer.heartbeat.interval.ms must be less than"):
        cluster(**{"group.consumer.heartbeat.interval.ms": "45000", "group.consumer.max.heartbeat.interval.ms": "45000",
                   "group.consumer.min.heartbeat.interval.ms": "45000"})


def test_a_bad_share_group_config_refuses_the_cluster_at_once() -> None:
    with pytest.raises(ConfigError, match="group.share.heartbeat.interval.ms must be less than"):
        cluster(**{"group.share.heartbeat.interval.ms": "45000", "group.share.session.timeout.ms": "45000",
                   "group.share.min.session.timeout.ms": "45000", "group.share.max.heartbeat.interval.ms": "45000",
                   "group.share.min.heartbeat.interval.ms": "45000"})


def test_a_cluster_loads_no_share_group_module_until_asked() -> None:
    code = ("import sys; from minibroker.core.cluster import Cluster; c = Cluster(); c.create_topic('t', 1); "
            "c.tick(); c.delete_topic('t'); print(sorted(m for m in sys.modules if 'share' in m)); "
            "c.shares.is_share_group('g'); print(sorted(m for m in sys.modules if 'share' in m))")
    before, after = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                   timeout=60).stdout.splitlines()
    assert before == "[]"
    assert "minibroker.core.share_state" in after and "minibroker.core.share_groups" in after


def test_offsets_expire_when_a_coordinator_built_at_start_up_expires_them() -> None:
    configs = {"offsets.retention.check.interval.ms": "1000", "offsets.retention.minutes": "1"}
    at_start, on_first_use = cluster(**configs), cluster(**configs)
    assert at_start.groups is at_start.groups  # built now, as every Cluster's was
    clusters = (at_start, on_first_use)
    for c in clusters:
        c.create_topic("t", 1)
    start = at_start.clock.now_ms()
    expired_at: dict[int, int] = {}
    for step in range(80):  # ticks 900 ms apart: a sweep every other tick, at the phase the schedule gives
        for index, c in enumerate(clusters):
            c.clock.advance(900)
            c.tick()
            if step == 2:  # 2700 ms after start (the sweep due at 1000 ran at 1800): the next ones run at 3600, 5400...
                c.groups.commit_offsets("g", -1, "", None, [("t", 0, 5, -1, None)])
            elif step > 2 and index not in expired_at and not c.groups.fetch_offsets("g", None):
                expired_at[index] = c.clock.now_ms() - start
    # retained until 62,700; the first sweep after that (a coordinator scheduling from when it is built: 63,900)
    assert expired_at[0] == expired_at[1] == 63_000


def test_the_credential_store_is_one_store() -> None:
    c = cluster()
    c.credentials.set_plain_user("alice", "secret")
    assert c.credentials is c.credentials and c.credentials.plain_password("alice") == "secret"
