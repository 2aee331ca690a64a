"""The `minibroker serve` contract: start-up refusals, --config files, clean stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from minibroker.protocol.messages import MetadataRequest
from minibroker.testing.process import start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "minibroker", "serve", "--port", "0", *args],
                          capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize(("setting", "expected"), [
    ("log.producer.state.batches.to.retain=3",
     "Invalid value 3 for configuration log.producer.state.batches.to.retain: Value must be at least 5"),
    ("log.producer.state.batches.to.retain=five",
     "Invalid value five for configuration log.producer.state.batches.to.retain"),
    ("producer.id.expiration.ms=0", "Invalid value 0 for configuration producer.id.expiration.ms"),
    ("no.such.config=1", "Unknown broker config name: no.such.config"),
    ("auto.create.topics.enable=maybe", "Invalid value maybe for configuration auto.create.topics.enable"),
])
def test_invalid_or_unknown_config_refuses_to_start(setting, expected):
    result = serve("--set", setting)
    assert result.returncode != 0
    assert expected in result.stderr
    assert "listening" not in result.stderr


def test_invalid_config_in_properties_file_refuses_to_start(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("# broker settings\nnum.partitions=2\nlog.producer.state.batches.to.retain=1\n")
    result = serve("--config", str(path))
    assert result.returncode != 0
    assert "log.producer.state.batches.to.retain" in result.stderr


def test_config_file_applies_and_set_overrides_it(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("num.partitions=2\nauto.create.topics.enable=true\n")
    process = start_broker("num.partitions=4", extra_args=("--config", str(path)))
    try:
        with WireClient(process.host, process.port) as wire:
            topic = unique_topic("cli")
            response = wire.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
                                                    allow_auto_topic_creation=True), 12)
            assert len(response.topics[0].partitions) == 4
    finally:
        process.stop()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_stops_the_broker_cleanly(sig):
    process = start_broker()
    os.kill(process.pid, sig)
    assert process._popen.wait(10) == 0
    assert "minibroker stopped" in process.log_text()


@pytest.mark.parametrize(("args", "expected"), [
    (("--as-version", "1.0"), "unknown Kafka release '1.0': choose one of 2.8, 3.9, 4.0, 4.1, 4.2, latest"),
    (("--node-profile", "1=3.9"), "--node-profile names node(s) [1]; the nodes are [0]"),
    (("--nodes", "2", "--node-profile", "one=3.9"), "--node-profile expects NODE_ID=RELEASE"),
    (("--nodes", "2", "--node-profile", "1=9.9"), "unknown Kafka release '9.9'"),
    (("--advertised-listeners", "localhost"), "--advertised-listeners: 'localhost' is not HOST:PORT"),
    (("--nodes", "2", "--advertised-listeners", "h:1"), "lists 1 addresses for 2 nodes"),
    (("--fault", "produce:explode"), "ACTION is drop or delay=MS"),
    (("--as-version", "3.9", "--set", "log.producer.state.batches.to.retain=20"),
     "Unknown broker config name: log.producer.state.batches.to.retain"),
])
def test_bad_cluster_options_refuse_to_start(args, expected):
    result = serve(*args)
    assert result.returncode == 2
    assert expected in result.stderr
    assert "listening" not in result.stderr


def test_advertised_listener_is_what_metadata_gives_clients():
    process = start_broker(extra_args=("--advertised-listeners", "proxy.example:19092"))
    try:
        with WireClient(process.host, process.port) as wire:
            brokers = wire.request(MetadataRequest(topics=[]), 12).brokers
        assert [(b.host, b.port) for b in brokers] == [("proxy.example", 19092)]
        assert "advertised as proxy.example:19092" in process.log_text()
    finally:
        process.stop()
