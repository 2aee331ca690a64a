"""An asyncio Kafka-protocol client on the project's protocol layer, and the KIP-1269 producer."""

from .client import KafkaClient
from .connection import BrokerConnection, ConnectionClosed
from .producer import Producer, RecordMetadata

__all__ = ["BrokerConnection", "ConnectionClosed", "KafkaClient", "Producer", "RecordMetadata"]
