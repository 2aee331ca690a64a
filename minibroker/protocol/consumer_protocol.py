"""The consumer protocol's embedded blobs: a member's subscription (JoinGroup metadata) and assignment (SyncGroup)."""

from __future__ import annotations

from typing import Any

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

CONSUMER_PROTOCOL_TYPE = "consumer"


def subscribed_topics(metadata: bytes) -> set[str]:
    """The topics a consumer-protocol member subscribes to; empty if the blob cannot be read."""
    try:
        subscription = ConsumerProtocolSubscription.decode(metadata)
    except Exception:  # a client's blob we cannot parse subscribes to nothing we know of
        return set()
    return set(subscription.topics or [])


def decode_subscription(metadata: bytes) -> Any:
    """ConsumerProtocol.deserializeConsumerProtocolSubscription; ValueError if the blob is malformed."""
    try:
        return ConsumerProtocolSubscription.decode(metadata)
    except Exception as exc:  # any schema failure is a malformed blob
        raise ValueError(str(exc)) from None


def subscription_owned(subscription: Any) -> dict[str, set[int]]:
    owned: dict[str, set[int]] = {}
    for tp in getattr(subscription, "owned_partitions", None) or []:
        owned.setdefault(tp.topic, set()).update(tp.partitions)
    return owned


def decode_assignment(data: bytes) -> dict[str, set[int]]:
    """A classic member's assignment blob; empty when there is none or it is malformed."""
    if not data:
        return {}
    try:
        decoded = ConsumerProtocolAssignment.decode(data)
    except Exception:  # a member whose blob we cannot read owns nothing we know of
        return {}
    return {topic: set(partitions) for topic, partitions in
            ((tp.topic, tp.partitions) for tp in decoded.assigned_partitions or []) if partitions}


def encode_assignment(assignment: dict[str, set[int]], protocols: list[tuple[str, bytes]]) -> bytes:
    """ConsumerProtocol.serializeAssignment at the version of the member's first protocol's subscription."""
    version = 0
    if protocols and len(protocols[0][1]) >= 2:
        version = min(max(int.from_bytes(protocols[0][1][:2], "big", signed=True), 0),
                      ConsumerProtocolAssignment.max_version)
    return bytes(ConsumerProtocolAssignment(
        version=version,
        assigned_partitions=[ConsumerProtocolAssignment.TopicPartition(topic=topic, partitions=sorted(partitions))
                             for topic, partitions in sorted(assignment.items())],
        user_data=None).encode(version=version))
