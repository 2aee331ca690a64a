"""What KIP-848 consumer groups and KIP-1071 streams groups share (Kafka's ModernGroup and ModernGroupMember):
the member epochs a heartbeat leaves with, the error a refused heartbeat raises, and the member-epoch check of
offset commits and fetches."""

from __future__ import annotations

from ..protocol.errors import ErrorCode

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2


class HeartbeatError(Exception):
    """A heartbeat (or a classic request on a consumer group) refused with a Kafka error code and message."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def member_epoch_error(received: int, expected: int) -> ErrorCode:
    """An offset request's member epoch against the member's: a newer one is fenced, an older one stale."""
    if received > expected:
        return ErrorCode.FENCED_MEMBER_EPOCH
    if received < expected:
        return ErrorCode.STALE_MEMBER_EPOCH
    return ErrorCode.NONE
