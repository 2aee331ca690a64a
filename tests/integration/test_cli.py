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
