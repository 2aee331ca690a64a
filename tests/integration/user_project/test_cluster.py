"""What the service sees of the cluster: brokers and partitions."""

import pytest
from confluent_kafka.admin import AdminClient


def test_a_three_node_cluster(kafka_broker_factory):
    cluster = kafka_broker_factory(nodes=3)
    metadata = AdminClient({"bootstrap.servers": cluster.bootstrap_servers}).list_topics(timeout=30)
    assert len(metadata.brokers) == 3


@pytest.mark.kafka_topic(partitions=3)
def test_a_topic_with_three_partitions(kafka_broker, kafka_topic):
    metadata = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers}).list_topics(kafka_topic, timeout=30)
    assert sorted(metadata.topics[kafka_topic].partitions) == [0, 1, 2]
