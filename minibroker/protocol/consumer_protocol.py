"""The consumer protocol's embedded subscription blob (JoinGroup member metadata)."""

from __future__ import annotations

from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

CONSUMER_PROTOCOL_TYPE = "consumer"


def subscribed_topics(metadata: bytes) -> set[str]:
    """The topics a consumer-protocol member subscribes to; empty if the blob cannot be read."""
    try:
        subscription = ConsumerProtocolSubscription.decode(metadata)
    except Exception:  # a client's blob we cannot parse subscribes to nothing we know of
        return set()
    return set(subscription.topics or [])
