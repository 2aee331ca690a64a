"""Test control over its port, against a real broker process: every operation seen on the wire."""

from __future__ import annotations

import json
import socket
import time

import pytest

from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import InitProducerIdRequest, MetadataRequest, ProduceRequest
from minibroker.server.broker import Broker
from minibroker.testing.control import Control, ControlClient, ControlError
from minibroker.testing.process import start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic, wait_until
from tests.integration.test_cli import start_serve
from tests.integration.test_wire_protocol import create_topic, fetch_all, produce_request


@pytest.fixture(scope="module")
def controlled():
    process = start_broker(extra_args=("--control-port", "0", "--nodes", "2"))
    yield process
    process.stop()


@pytest.fixture
def control(controlled):
    with controlled.control as client:
        yield client
        client.clear()


def batch(value: bytes = b"v") -> bytes:
    return records.build_batch([(None, value)], timestamp=int(time.time() * 1000))


def leader_port(process, topic: str, partition: int = 0) -> int:
    with WireClient(process.host, process.port) as wire:
        metadata = wire.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)]), 12)
    ports = {b.node_id: b.port for b in metadata.brokers}
    leader = next(p.leader_id for p in metadata.topics[0].partitions if p.partition_index == partition)
    return ports[leader]


def two_partition_produce(topic: str) -> ProduceRequest:
    data = ProduceRequest.TopicProduceData(name=topic, partition_data=[
        ProduceRequest.TopicProduceData.PartitionProduceData(index=i, records=batch(f"p{i}".encode()))
        for i in (0, 1)])
    return ProduceRequest(transactional_id=None, acks=-1, timeout_ms=5000, topic_data=[data])


def new_topic(process, partitions: int = 1) -> str:
    topic = unique_topic("ctl")
    with WireClient(process.host, process.port) as wire:
        create_topic(wire, topic, partitions)
    return topic


def test_hold_keeps_produce_answers_and_counts_them_until_release(controlled, control):
    topic = new_topic(controlled)
    control.hold(topic, 0)
    with WireClient(controlled.host, leader_port(controlled, topic), timeout=0.5) as wire:
        for _ in range(3):
            wire.send_raw(wire.encode_request(produce_request(topic, batch()), 9))
        wait_until(lambda: control.in_flight(topic, 0)["current"] >= 3, 5, "three held produce requests")
        assert control.in_flight(topic, 0) == {"current": 3, "max": 3}
        with pytest.raises(socket.timeout):
            wire.read_frame()  # held: nothing comes back
        assert control.release(topic, 0) == 1  # one parked answer; the other two queue behind it
        wire.sock.settimeout(5)
        offsets = [WireClient.decode_response(wire.read_frame(), 0, 9)[1].responses[0].partition_responses[0]
                   for _ in range(3)]
    assert [(p.error_code, p.base_offset) for p in offsets] == [(0, 0), (0, 1), (0, 2)]
    assert control.in_flight(topic, 0) == {"current": 0, "max": 3}


def test_injected_error_fails_only_the_matching_partition_and_appends_nothing(controlled, control):
    topic = new_topic(controlled, partitions=2)
    control.move_leader(topic, 1, 0 if leader_port(controlled, topic, 0) == controlled.port else 1)
    rule = control.inject_error("produce", error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER, count=1, topic=topic,
                                partition=1)
    assert rule["remaining"] == 1
    with WireClient(controlled.host, leader_port(controlled, topic, 0)) as wire:
        first = wire.request(two_partition_produce(topic), 9)
        second = wire.request(two_partition_produce(topic), 9)
        codes = [{p.index: (p.error_code, p.base_offset) for p in r.responses[0].partition_responses}
                 for r in (first, second)]
        assert codes == [{0: (0, 0), 1: (ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)}, {0: (0, 1), 1: (0, 0)}]
    assert control.status()["rules"] == []  # spent


def test_error_after_append_keeps_the_records(controlled, control):
    topic = new_topic(controlled)
    control.inject_error("produce", error_code=ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, topic=topic,
                         after_append=True)
    with WireClient(controlled.host, leader_port(controlled, topic)) as wire:
        answer = wire.request(produce_request(topic, batch(b"kept")), 9).responses[0].partition_responses[0]
        assert answer.error_code == ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        assert b"kept" in fetch_all(wire, topic)


def test_injected_error_on_an_api_with_a_top_level_error_code(controlled, control):
    control.inject_error("init_producer_id", error_code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, count=2)
    with WireClient(controlled.host, controlled.port) as wire:
        request = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000)
        codes = [wire.request(request, 4).error_code for _ in range(3)]
    assert codes == [ErrorCode.COORDINATOR_LOAD_IN_PROGRESS] * 2 + [0]


def test_delay_holds_the_answer_back(controlled, control):
    control.delay("metadata", delay_ms=400)
    with WireClient(controlled.host, controlled.port) as wire:
        started = time.monotonic()
        wire.request(MetadataRequest(topics=[]), 12)
        assert time.monotonic() - started >= 0.4


def test_drop_closes_the_connection_after_handling(controlled, control):
    topic = new_topic(controlled)
    control.drop("produce", topic=topic)
    with WireClient(controlled.host, leader_port(controlled, topic)) as wire:
        wire.send_raw(wire.encode_request(produce_request(topic, batch(b"dropped")), 9))
        assert wire.is_closed_by_peer()
    with WireClient(controlled.host, leader_port(controlled, topic)) as wire:
        assert b"dropped" in fetch_all(wire, topic)  # handled, only the answer was lost
    assert control.in_flight(topic, 0)["current"] == 0


def test_drop_connections_closes_clients_of_one_node(controlled, control):
    with WireClient(controlled.host, controlled.port) as wire:
        wire.request(MetadataRequest(topics=[]), 12)
        assert control.drop_connections(node=0) >= 1
        assert wire.is_closed_by_peer()


def test_move_leader_redirects_clients(controlled, control):
    topic = new_topic(controlled)
    before = leader_port(controlled, topic)
    with WireClient(controlled.host, before) as wire:
        metadata = wire.request(MetadataRequest(topics=[]), 12)
    other = next(b.node_id for b in metadata.brokers if b.port != before)
    moved = control.move_leader(topic, 0, node=other)
    assert moved["leader"] == other and moved["leader_epoch"] == 1
    assert leader_port(controlled, topic) != before
    with WireClient(controlled.host, before) as wire:
        answer = wire.request(produce_request(topic, batch(), version=11), 11).responses[0].partition_responses[0]
    assert answer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert answer.current_leader.leader_id == other and answer.current_leader.leader_epoch == 1


@pytest.mark.parametrize(("call", "message"), [
    (lambda c: c.call("format_disk"), "unknown operation"),
    (lambda c: c.inject_error("no_such_api", error_code=6), "unknown API"),
    (lambda c: c.inject_error("produce", error_code=9999), "9999"),
    (lambda c: c.inject_error("metadata", error_code=6), "top-level error code"),
    (lambda c: c.inject_error("produce", error_code=ErrorCode.INVALID_RECORD, after_append=True),
     "after_append needs a retriable error code: Kafka never appends a batch and then answers INVALID_RECORD"),
    (lambda c: c.delay("fetch", delay_ms=10, topic="t"), "Produce requests only"),
    (lambda c: c.move_leader("no-such-topic", 0, node=1), "UNKNOWN_TOPIC_OR_PARTITION"),
    (lambda c: c.move_leader("t", 0, node=77), "no node 77"),
    (lambda c: c.call("hold", topic="t"), "partition"),
])
def test_bad_control_requests_are_refused_and_control_goes_on(controlled, control, call, message):
    with pytest.raises(ControlError, match=message):
        call(control)
    assert control.status()["rules"] == []


def test_garbage_on_the_control_port_gets_an_error_line(controlled):
    with socket.create_connection((controlled.host, controlled.control_port), timeout=5) as sock:
        sock.sendall(b"not json\n")
        answer = json.loads(sock.makefile("rb").readline())
    assert answer["ok"] is False and "JSONDecodeError" in answer["error"]
    with controlled.control as client:
        assert client.status()["held_answers"] == 0


async def test_in_process_control_of_an_embedded_broker():
    async with Broker(port=0) as broker:
        control = Control.attach(broker)
        from minibroker.client import KafkaClient

        client = KafkaClient(broker.bootstrap_servers)
        await client.start()
        try:
            control.inject_error("init_producer_id", error_code=ErrorCode.NOT_COORDINATOR)
            request = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000)
            node = next(iter(client.nodes))
            assert (await client.request(node, request, 4)).error_code == ErrorCode.NOT_COORDINATOR
            assert (await client.request(node, request, 4)).error_code == 0
        finally:
            await client.close()


def test_clear_keeps_the_start_up_faults_which_the_start_up_log_names():
    process = start_serve("--host", "127.0.0.1", "--port", "0", "--control-port", "0", "--fault", "metadata:drop")
    try:
        with ControlClient("127.0.0.1", process.ready["control_port"]) as control:
            control.inject_error("init_producer_id", error_code=ErrorCode.NOT_COORDINATOR)
            control.clear()
            status = control.status()
            assert status["rules"] == []
            assert [(f["api_key"], f["action"], f["remaining"]) for f in status["faults"]] == [(3, "drop", None)]
        with WireClient("127.0.0.1", process.ready["nodes"][0]["port"]) as wire:
            wire.send_raw(wire.encode_request(MetadataRequest(topics=[]), 12))
            assert wire.is_closed_by_peer()  # still dropped after clear()
    finally:
        process.stop()
    assert "minibroker faults from --fault: metadata:drop" in process.stderr()


def test_clear_keeps_a_broker_threads_start_up_faults():
    from minibroker.testing.embedded import BrokerThread
    from minibroker.testing.faults import parse_faults

    with BrokerThread(faults=parse_faults(["metadata:delay=1"])) as broker:
        broker.control.clear()
        assert [f["delay_ms"] for f in broker.control.status()["faults"]] == [1]


def test_a_produce_request_is_decoded_once_with_test_control_attached(monkeypatch):
    """Control sees the request the dispatcher handles: held, queued behind another, or handled at once."""
    from minibroker.apis import dispatch
    from minibroker.protocol.messages import REQUESTS
    from minibroker.testing.embedded import BrokerThread

    decoded: list[int] = []
    decode_request = dispatch.decode_request
    engine_decode = REQUESTS[0].decode

    def counted(api_key, version, body):
        decoded.append(api_key)
        return decode_request(api_key, version, body)

    def counted_engine(*args, **kwargs):
        decoded.append(0)
        return engine_decode(*args, **kwargs)

    monkeypatch.setattr(dispatch, "decode_request", counted)
    monkeypatch.setattr(REQUESTS[0], "decode", counted_engine)
    with BrokerThread() as broker:
        host, port = broker.bootstrap_servers.split(":")
        topic = unique_topic("ctl")
        with WireClient(host, int(port)) as wire:
            create_topic(wire, topic)
            broker.control.hold(topic, 0)
            decoded.clear()
            for _ in range(3):  # the second and third wait behind the held first
                wire.send_raw(wire.encode_request(produce_request(topic, batch()), 9))
            wait_until(lambda: broker.control.in_flight(topic, 0)["current"] == 3, 5, "three produce requests seen")
            broker.control.release(topic, 0)
            answers = [WireClient.decode_response(wire.read_frame(), 0, 9)[1] for _ in range(3)]
    assert [a.responses[0].partition_responses[0].base_offset for a in answers] == [0, 1, 2]
    assert decoded.count(0) == 3


def test_the_process_s_topic_helpers_work_after_its_connections_are_dropped(controlled, control):
    """BrokerProcess.create_topic keeps one admin connection: one the broker closed is replaced before the next
    request is sent, as a Kafka Admin reconnects, instead of failing that request."""
    first = controlled.create_topic(unique_topic("admin-before-drop"))
    assert control.drop_connections() >= 1
    second = controlled.create_topic(unique_topic("admin-after-drop"))
    controlled.delete_topic(first)
    controlled.delete_topic(second)
