"""The cluster's share-group state (KIP-932): the share coordinator's groups and share partitions, and the share
sessions open on the brokers.

Kept on the Cluster beside its group and transaction coordinators. `tick` runs what is due on the core's clock:
members whose `share.session.timeout.ms` ran out leave (their records come back and their share sessions close,
as Kafka's share-group listener closes them), and acquisition locks that ran out release their records, which wakes
a ShareFetch waiting on that share partition (SharePartition's acquisition-lock timer task completes delayed share
fetches the same way). A deleted topic takes its share partitions with it, so a topic created again under the same
name starts afresh.
"""

from __future__ import annotations

from .broker_config import BrokerConfig
from .clock import Clock
from .group_configs import validate_share_group_configs
from .share_groups import ShareGroupCoordinator
from .share_sessions import ShareSessionCache


class ShareState:
    """A cluster's share groups and the share sessions open on it."""

    def __init__(self, clock: Clock, config: BrokerConfig) -> None:
        """ConfigError when the `group.share.*` broker configs fail Kafka's start-up checks."""
        validate_share_group_configs(config)
        self.clock = clock
        self.coordinator = ShareGroupCoordinator(clock, config.group_value,
                                                 lambda: int(config["group.share.max.size"]))
        self.sessions = ShareSessionCache(int(config["group.share.max.share.sessions"]))
        self.coordinator.on_member_removed.append(self.sessions.forget_member)

    def is_share_group(self, group_id: str) -> bool:
        """Whether `group_id` names a share group (the classic and consumer APIs then refuse it as Kafka does)."""
        return group_id in self.coordinator.groups

    def tick(self) -> None:
        """Expire timed-out members (and their sessions), then the acquisition locks that ran out."""
        self.coordinator.expire()
        now = self.clock.now_ms()
        for group in self.coordinator.groups.values():
            for share_partition in group.partitions.values():
                deadline = share_partition.next_lock_deadline()
                if deadline is not None and deadline <= now:
                    share_partition.expire_locks(now)

    def forget_topic(self, topic: str) -> None:
        """A deleted topic: its share partitions and its place in share sessions go."""
        self.coordinator.forget_topic(topic)
        self.sessions.forget_topic(topic)
