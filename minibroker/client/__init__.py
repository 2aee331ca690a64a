"""An asyncio Kafka-protocol client on the project's protocol layer, and the KIP-1269 producer."""

from .accumulator import RecordMetadata
from .client import KafkaClient
from .connection import BrokerConnection, ConnectionClosed
from .producer import Producer

__all__ = ["BrokerConnection", "ConnectionClosed", "KafkaClient", "Producer", "RecordMetadata"]
