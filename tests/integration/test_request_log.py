"""What `minibroker serve` reports: a DEBUG line per request and per connection, listeners and non-default
configs at start-up, and the JSON ready signal on stdout and in --ready-file."""

from __future__ import annotations

import json
import re

import minibroker
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import ApiVersionsRequest, MetadataRequest
from minibroker.testing.wire import WireClient
from tests.helpers import wait_until
from tests.integration.test_cli import ServeProcess, start_serve
from tests.integration.test_wire_protocol import BATCH, create_topic, produce_request

REQUEST_LINE = re.compile(  # error_code=none: the request gets no response (acks=0)
    r"DEBUG minibroker\.connection: request from (?P<address>[\d.]+:\d+) client_id=(?P<client_id>\S+) "
    r"api=(?P<api>[A-Z_]+) v(?P<version>\d+) correlation_id=(?P<correlation_id>-?\d+) "
    r"latency_ms=(?P<latency>\d+\.\d+) error_code=(?P<error_code>-?\d+|none)$",
    re.MULTILINE,
)


def wait_for(process: ServeProcess, text: str, timeout: float = 10.0) -> str:
    """The broker's stderr once it holds `text` (the broker logs from its own loop)."""
    return wait_until(lambda: log if text in (log := process.stderr()) else "", timeout,
                      lambda: f"{text!r} never appeared in:\n{process.stderr()}", interval=0.05)


def test_debug_logs_every_request_and_connection():
    process = start_serve("--host", "127.0.0.1", "--port", "0", "--log-level", "debug")
    try:
        port = process.ready["nodes"][0]["port"]
        with WireClient("127.0.0.1", port, client_id="log-test") as wire:
            address = f"127.0.0.1:{wire.sock.getsockname()[1]}"
            wire.request(ApiVersionsRequest(client_software_name="log-test", client_software_version="1"), 3)
            missing = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="no-such-topic")],
                                      allow_auto_topic_creation=False)
            wire.request(missing, 12)
        log = wait_for(process, f"connection from {address} closed")
    finally:
        assert process.stop() == 0
    assert f"connection from {address} opened" in log
    assert f"connection from {address} closed after 2 requests" in log
    requests = [m.groupdict() for m in REQUEST_LINE.finditer(log) if m["address"] == address]
    assert [(r["client_id"], r["api"], r["version"], r["correlation_id"]) for r in requests] == [
        ("log-test", "API_VERSIONS", "3", "1"),
        ("log-test", "METADATA", "12", "2"),
    ]
    assert all(0 <= float(r["latency"]) < 5000 for r in requests)
    # Metadata's top level says 0; the topic's UNKNOWN_TOPIC_OR_PARTITION is the error worth logging
    assert [int(r["error_code"]) for r in requests] == [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION.value]


def test_debug_log_of_produce_finds_partition_errors_and_unanswered_requests():
    process = start_serve("--host", "127.0.0.1", "--port", "0", "--log-level", "debug")
    try:
        with WireClient("127.0.0.1", process.ready["nodes"][0]["port"], client_id="producer-1") as wire:
            address = f"127.0.0.1:{wire.sock.getsockname()[1]}"
            create_topic(wire, "logged")
            wire.send_raw(wire.encode_request(produce_request("logged", BATCH, acks=0), 9))
            assert wire.request(produce_request("logged", BATCH), 9).responses[0].partition_responses[0].error_code == 0
            no_partition = wire.request(produce_request("logged", BATCH, partition=5), 9)
            assert no_partition.responses[0].partition_responses[0].error_code != 0
        log = wait_for(process, f"connection from {address} closed")
    finally:
        assert process.stop() == 0
    requests = [m.groupdict() for m in REQUEST_LINE.finditer(log) if m["address"] == address]
    assert [(r["api"], r["correlation_id"], r["error_code"]) for r in requests] == [
        ("CREATE_TOPICS", "1", "0"),
        ("PRODUCE", "2", "none"),
        ("PRODUCE", "3", "0"),
        ("PRODUCE", "4", str(no_partition.responses[0].partition_responses[0].error_code)),
    ]
    assert f"connection from {address} closed after 4 requests" in log


def test_info_logs_no_requests_but_lists_listeners_and_non_default_configs():
    process = start_serve("--host", "127.0.0.1", "--port", "0", "--nodes", "2",
                          "--set", "num.partitions=3", "--set", "auto.create.topics.enable=true")
    try:
        nodes = process.ready["nodes"]
        with WireClient("127.0.0.1", nodes[0]["port"]) as wire:
            wire.request(MetadataRequest(topics=[]), 12)
    finally:
        assert process.stop() == 0
    log = process.stderr()
    assert "request from" not in log and "opened" not in log
    for node in nodes:
        assert (f"minibroker node {node['node_id']} listening on 127.0.0.1:{node['port']}, "
                f"advertised as 127.0.0.1:{node['port']}") in log
    # auto.create.topics.enable=true is Kafka's default: not worth listing
    assert "minibroker non-default configs: num.partitions=3\n" in log


def test_ready_line_on_stdout_and_in_the_ready_file(tmp_path):
    ready_file = tmp_path / "ready.json"
    process = start_serve("--host", "127.0.0.1", "--port", "0", "--nodes", "2", "--control-port", "0",
                          "--ready-file", str(ready_file))
    try:
        assert ready_file.exists()  # written before the line on stdout
        from_file = json.loads(ready_file.read_text())
        log = process.stderr()
    finally:
        assert process.stop() == 0
    assert process.stdout().count("\n") == 1  # one JSON line, nothing else
    ready = process.ready
    assert from_file == ready
    assert not (tmp_path / "ready.json.tmp").exists()
    assert ready["event"] == "ready" and ready["pid"] == process.pid and ready["version"] == minibroker.__version__
    first_port = int(re.search(r"minibroker listening on 127\.0\.0\.1:(\d+)", log).group(1))
    control_port = int(re.search(r"minibroker control listening on 127\.0\.0\.1:(\d+)", log).group(1))
    assert ready["control_port"] == control_port
    assert [node["node_id"] for node in ready["nodes"]] == [0, 1]
    assert ready["nodes"][0]["port"] == first_port
    ports = [node["port"] for node in ready["nodes"]]
    assert ready["bootstrap_servers"] == ",".join(f"127.0.0.1:{port}" for port in ports)
    assert all(node["host"] == node["advertised_host"] == "127.0.0.1" for node in ready["nodes"])
    assert [node["advertised_port"] for node in ready["nodes"]] == ports
    assert ready_file.exists()  # nothing is removed on exit


def test_ready_line_without_control_port_says_null():
    process = start_serve("--host", "127.0.0.1", "--port", "0")
    try:
        assert process.ready["control_port"] is None
        assert process.ready["bootstrap_servers"] == f"127.0.0.1:{process.ready['nodes'][0]['port']}"
    finally:
        process.stop()
