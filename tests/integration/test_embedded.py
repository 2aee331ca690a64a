"""BrokerThread and ClusterThread: the thread-backed broker for unittest, scripts and sync clients."""

from __future__ import annotations

import asyncio
import socket

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaAdminClient

from minibroker.core.config import ConfigError
from minibroker.testing.admin import TopicError
from minibroker.testing.embedded import BrokerThread, ClusterThread


def test_sync_client_flushes_against_a_broker_thread() -> None:
    with BrokerThread(config={"num.partitions": "2"}) as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
        producer.produce("events", b"one", key=b"k")
        assert producer.flush(10) == 0
        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "g",
                             "auto.offset.reset": "earliest"})
        consumer.subscribe(["events"])
        message = consumer.poll(10)
        consumer.close()
        assert message is not None and message.value() == b"one"
        assert len(broker.cluster.topics["events"].partitions) == 2


async def test_async_test_on_its_own_loop_uses_a_broker_thread() -> None:
    from aiokafka import AIOKafkaProducer

    with BrokerThread() as broker:
        async with AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers) as producer:
            metadata = await producer.send_and_wait("events", b"x")
        assert metadata.offset == 0
        assert asyncio.get_running_loop() is not broker.call(asyncio.get_running_loop)


def test_bad_config_raises_in_the_caller_before_any_thread() -> None:
    with pytest.raises(ConfigError, match="Invalid value 3 for configuration log.producer.state.batches.to.retain"):
        BrokerThread(config={"log.producer.state.batches.to.retain": "3"})


def test_cluster_thread_has_three_nodes_and_moves_leaders_on_its_thread() -> None:
    with ClusterThread(node_releases={2: "3.9"}) as cluster:
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
        assert len(admin.describe_cluster()["brokers"]) == 3
        admin.close()
        cluster.create_topic("moved", partitions=1)
        cluster.control.move_leader("moved", 0, node=2)
        assert cluster.cluster.topics["moved"].partitions[0].leader_id == 2
        assert cluster.cluster.nodes[2].release == "3.9"


def test_create_topic_refusal_carries_kafkas_error_and_stores_nothing() -> None:
    with BrokerThread() as broker:
        with pytest.raises(TopicError, match=r"INVALID_CONFIG \(40\): Invalid value bogus for configuration "
                                             r"cleanup.policy") as refused:
            broker.create_topic("refused", config={"cleanup.policy": "bogus"})
        assert refused.value.error_code == 40
        assert "refused" not in broker.cluster.topics
        broker.create_topic("kept", partitions=2)
        broker.delete_topic("kept")
        broker.delete_topic("kept")  # already gone is fine
        assert "kept" not in broker.cluster.topics


def test_stop_closes_the_listener_and_call_refuses_afterwards() -> None:
    broker = BrokerThread().start()
    host, port = broker.bootstrap_servers.split(":")
    socket.create_connection((host, int(port)), timeout=5).close()
    broker.stop()
    broker.stop()
    assert not broker.running
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, int(port)), timeout=5)
    with pytest.raises(RuntimeError, match="not running"):
        broker.call(len, [])


def test_a_port_in_use_fails_start_with_the_os_error() -> None:
    with BrokerThread() as first:
        port = int(first.bootstrap_servers.split(":")[1])
        with pytest.raises(OSError):
            BrokerThread(port=port).start()


def test_a_secured_broker_removes_its_throwaway_keys_when_it_stops() -> None:
    broker = BrokerThread.secured()
    assert broker.security is not None
    directory = broker.security.ca.directory
    assert (directory / "ca.pem").is_file()
    broker.stop()
    assert not directory.exists()


def test_a_secured_broker_keeps_a_directory_it_was_given(tmp_path) -> None:
    with BrokerThread.secured(tmp_path / "pki"):
        pass
    assert (tmp_path / "pki" / "ca.pem").is_file()
