"""Share sessions (KIP-932): the partitions a member share-fetches from, and the epoch that orders its requests.

Mirrors Kafka 4.3.1's ShareSessionCache and ShareFetchContext: a ShareFetch with epoch 0 opens a session for
(group, member), replacing an existing one; -1 closes it; any other epoch must be the session's next, which
each ShareFetch or ShareAcknowledge then advances. An unknown session is SHARE_SESSION_NOT_FOUND, a wrong
epoch INVALID_SHARE_SESSION_EPOCH; at most `group.share.max.share.sessions` are open
(SHARE_SESSION_LIMIT_REACHED).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..protocol.errors import ErrorCode

INITIAL_EPOCH, FINAL_EPOCH = 0, -1

#: (topic name, partition)
TopicPartition = tuple[str, int]


@dataclass(slots=True)
class ShareSession:
    """One member's share session: its partitions and the epoch its next request must carry."""

    group_id: str
    member_id: str
    epoch: int = 1
    partitions: dict[TopicPartition, None] = field(default_factory=dict)  # ordered set


class ShareSessionCache:
    """The open share sessions of one node."""

    def __init__(self, max_sessions: int = 2000) -> None:
        self.max_sessions = max_sessions
        self.sessions: dict[tuple[str, str], ShareSession] = {}

    def get(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.get((group_id, member_id))

    def check(self, group_id: str, member_id: str, epoch: int) -> ErrorCode:
        """Whether a request with `epoch` (not 0) may use the member's session."""
        session = self.sessions.get((group_id, member_id))
        if session is None:
            return ErrorCode.SHARE_SESSION_NOT_FOUND
        if epoch != FINAL_EPOCH and epoch != session.epoch:
            return ErrorCode.INVALID_SHARE_SESSION_EPOCH
        return ErrorCode.NONE

    def open(self, group_id: str, member_id: str) -> tuple[ShareSession | None, ShareSession | None]:
        """(the new session, the one it replaced); no new session when the cache is full."""
        key = (group_id, member_id)
        replaced = self.sessions.pop(key, None)
        if len(self.sessions) >= self.max_sessions:
            if replaced is not None:
                self.sessions[key] = replaced
            return None, None
        session = self.sessions[key] = ShareSession(group_id, member_id)
        return session, replaced

    def advance(self, session: ShareSession) -> None:
        """The session's epoch after a request it served (wrapping as Kafka's nextEpoch does)."""
        session.epoch = 1 if session.epoch == 2**31 - 1 else session.epoch + 1

    def close(self, group_id: str, member_id: str) -> ShareSession | None:
        return self.sessions.pop((group_id, member_id), None)

    def forget_member(self, group_id: str, member_id: str) -> None:
        """The member left the group or timed out: its session goes with it."""
        self.sessions.pop((group_id, member_id), None)

    def forget_topic(self, topic: str) -> None:
        """A deleted topic leaves every session (a topic created again under its name is another topic)."""
        for session in self.sessions.values():
            for key in [k for k in session.partitions if k[0] == topic]:
                del session.partitions[key]
