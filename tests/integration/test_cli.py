"""The `minibroker` command: serve's start-up refusals, --config files, clean stops, environment and ready
signal; --version, --help; the `check` health check."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import minibroker as minibroker_package
from minibroker.protocol.messages import MetadataRequest
from minibroker.testing.process import start_broker, stop_process
from minibroker.testing.wire import WireClient
from tests.helpers import free_port, unique_topic


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
    (("--as-version", "1.0"), "unknown Kafka release '1.0': choose one of 2.8, 3.9, 4.0, 4.1, 4.2, 4.3, 4.4, latest"),
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


# -- the command line around `serve`: version, help, log level, environment, ready signal, health check ----------


def clean_env(**overrides: str) -> dict[str, str]:
    """This process's environment without MINIBROKER_* variables, plus `overrides`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINIBROKER_")}
    env.update(overrides)
    return env


def minibroker(*args: str, env: dict[str, str] | None = None, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "minibroker", *args], capture_output=True, text=True,
                          timeout=timeout, env=clean_env() if env is None else env)


@dataclass
class ServeProcess:
    """A `minibroker serve` process whose stdout and stderr go to files; stopped by PID."""

    popen: subprocess.Popen[bytes]
    directory: Path
    ready: dict[str, Any] = field(default_factory=dict)  # the JSON ready line, once it came

    @property
    def pid(self) -> int:
        return self.popen.pid

    def stdout(self) -> str:
        return (self.directory / "stdout").read_text(errors="replace")

    def stderr(self) -> str:
        return (self.directory / "stderr").read_text(errors="replace")

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, then SIGKILL after `timeout`; the exit code."""
        return stop_process(self.popen, timeout)


def start_serve(*args: str, env: dict[str, str] | None = None, command: list[str] | None = None,
                timeout: float = 20.0) -> ServeProcess:
    """Run `minibroker serve ARGS` (or `command`) and wait for its JSON ready line on stdout."""
    directory = Path(tempfile.mkdtemp(prefix="minibroker-serve-"))
    argv = command or [sys.executable, "-m", "minibroker", "serve", *args]
    with open(directory / "stdout", "wb") as out, open(directory / "stderr", "wb") as err:
        popen = subprocess.Popen(argv, stdout=out, stderr=err, env=clean_env() if env is None else env)
    process = ServeProcess(popen, directory)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        first, newline, _ = process.stdout().partition("\n")
        if newline:
            process.ready = json.loads(first)
            return process
        if popen.poll() is not None:
            raise RuntimeError(f"minibroker exited with {popen.returncode}:\n{process.stderr()}")
        time.sleep(0.05)
    process.stop()
    raise RuntimeError(f"minibroker did not say it was ready within {timeout}s:\n{process.stderr()}")


def test_version_prints_the_package_version():
    result = minibroker("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"minibroker {minibroker_package.__version__}"


def test_serve_help_shows_defaults_and_environment_variables():
    result = minibroker("serve", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())  # argparse wraps lines
    for expected in ("(default: 127.0.0.1)", "(default: 9092)", "(default: INFO)", "(default: latest)",
                     "MINIBROKER_HOST", "MINIBROKER_PORT", "MINIBROKER_ADVERTISED_HOST",
                     "MINIBROKER_ADVERTISED_LISTENERS", "MINIBROKER_LOG_LEVEL", "--ready-file", "--advertised-host"):
        assert expected in text, expected
    assert text.count("127.0.0.1") == 1  # each default is said once
    assert "(default: None)" not in text and "(default: [])" not in text


def test_top_level_help_names_the_commands():
    result = minibroker("--help")
    assert result.returncode == 0
    assert "serve" in result.stdout and "check" in result.stdout and "--version" in result.stdout


@pytest.mark.parametrize("env", [{}, {"MINIBROKER_LOG_LEVEL": "LOUD"}])
def test_bad_log_level_is_one_line_and_exit_code_2(env):
    args = ("serve", "--port", "0") + (() if env else ("--log-level", "LOUD"))
    result = minibroker(*args, env=clean_env(**env))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert ("MINIBROKER_LOG_LEVEL=LOUD" if env else "--log-level") in result.stderr and "LOUD" in result.stderr
    assert "DEBUG" in result.stderr  # says what is valid


def test_bad_port_in_environment_is_refused():
    result = minibroker("serve", env=clean_env(MINIBROKER_PORT="ninety"))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "ninety" in result.stderr


def test_environment_gives_defaults_and_flags_win():
    process = start_serve(env=clean_env(MINIBROKER_HOST="127.0.0.1", MINIBROKER_PORT="0",
                                        MINIBROKER_LOG_LEVEL="debug", MINIBROKER_ADVERTISED_HOST="env.example"))
    try:
        node = process.ready["nodes"][0]
        assert (node["host"], node["advertised_host"]) == ("127.0.0.1", "env.example")
        assert node["port"] == node["advertised_port"] != 9092
        with WireClient("127.0.0.1", node["port"]) as wire:
            brokers = wire.request(MetadataRequest(topics=[]), 12).brokers
        assert [(b.host, b.port) for b in brokers] == [("env.example", node["port"])]
    finally:
        process.stop()
    assert " DEBUG " in process.stderr()
    process = start_serve("--advertised-host", "flag.example", "--log-level", "warning",
                          env=clean_env(MINIBROKER_HOST="127.0.0.1", MINIBROKER_PORT="0",
                                        MINIBROKER_LOG_LEVEL="debug", MINIBROKER_ADVERTISED_HOST="env.example"))
    try:
        assert process.ready["nodes"][0]["advertised_host"] == "flag.example"
    finally:
        process.stop()
    assert " DEBUG " not in process.stderr() and " INFO " not in process.stderr()


def test_advertised_listeners_from_the_environment():
    process = start_serve("--host", "127.0.0.1", "--port", "0",
                          env=clean_env(MINIBROKER_ADVERTISED_LISTENERS="proxy.example:19092"))
    try:
        assert process.ready["bootstrap_servers"] == "proxy.example:19092"
    finally:
        process.stop()


def test_check_succeeds_against_a_running_broker():
    process = start_broker()
    try:
        result = minibroker("check", process.bootstrap_servers)
        assert result.returncode == 0, result.stderr
        assert process.bootstrap_servers in result.stdout
        # without an address: 127.0.0.1 and MINIBROKER_PORT
        result = minibroker("check", env=clean_env(MINIBROKER_PORT=str(process.port)))
        assert result.returncode == 0, result.stderr
    finally:
        process.stop()


def test_check_fails_in_one_line_against_a_closed_port():
    result = minibroker("check", f"127.0.0.1:{free_port()}")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "refused" in result.stderr.lower()


def test_check_times_out_against_a_silent_listener():
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()  # connections complete in the backlog, nothing ever answers
        started = time.monotonic()
        result = minibroker("check", f"127.0.0.1:{silent.getsockname()[1]}", "--timeout", "0.5")
        elapsed = time.monotonic() - started
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "timed out" in result.stderr
    assert elapsed < 10


def test_check_rejects_a_bad_address():
    result = minibroker("check", "nowhere:port")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


# -- what the start-up says: each node's release, every listener ------------------------------------------------


def test_start_up_lines_and_ready_line_name_each_nodes_release_and_every_listener():
    process = start_serve("--nodes", "2", "--node-profile", "1=3.9", "--as-version", "4.2",
                          "--set", "listeners=INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
                          "--set", "listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT")
    try:
        nodes = process.ready["nodes"]
    finally:
        process.stop()
    assert [node["release"] for node in nodes] == ["4.2", "3.9"]
    log = process.stderr()
    for node, release in zip(nodes, ("Kafka 4.2", "Kafka 3.9"), strict=True):
        assert (f"minibroker node {node['node_id']} listening on 127.0.0.1:{node['port']}, advertised as "
                f"127.0.0.1:{node['advertised_port']}, speaks as {release}") in log, log
        for listener in node["listeners"]:
            assert (f"minibroker node {node['node_id']} listener {listener['name']} (PLAINTEXT) on "
                    f"127.0.0.1:{listener['port']}, advertised as 127.0.0.1:{listener['advertised_port']}") in log, log


def test_the_latest_release_says_what_it_is():
    process = start_serve("--host", "127.0.0.1", "--port", "0")
    process.stop()
    assert process.ready["nodes"][0]["release"] == "latest"
    assert ", speaks as latest (every version minibroker serves, with KIP-1269)" in process.stderr()


# -- errors that come from the environment name the variable -------------------------------------------------------


@pytest.mark.parametrize(("variable", "value", "said"), [
    ("MINIBROKER_PORT", "ninety", "'ninety' is not a port (0-65535)"),
    ("MINIBROKER_LOG_LEVEL", "LOUD", "'LOUD' is not a log level"),
    ("MINIBROKER_ADVERTISED_LISTENERS", "nowhere", "'nowhere' is not HOST:PORT"),
])
def test_a_bad_environment_variable_is_named_in_one_line(variable, value, said):
    port = () if variable == "MINIBROKER_PORT" else ("--port", "0")  # a flag would win over the variable
    result = minibroker("serve", *port, env=clean_env(**{variable: value}))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert f"{variable}={value}" in result.stderr and said in result.stderr, result.stderr
    assert "--port" not in result.stderr.replace("(see minibroker serve --help)", "")
    assert "--log-level" not in result.stderr and "--advertised-listeners" not in result.stderr


def test_check_names_a_bad_port_variable():
    result = minibroker("check", env=clean_env(MINIBROKER_PORT="ninety"))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "MINIBROKER_PORT=ninety" in result.stderr, result.stderr


# -- the ready file: what `check` reads, never stale ----------------------------------------------------------------


def test_check_without_an_address_asks_the_broker_its_ready_file_names(tmp_path):
    ready_file = tmp_path / "ready.json"
    env = clean_env(MINIBROKER_READY_FILE=str(ready_file), MINIBROKER_PORT=str(free_port()))
    process = start_serve("--host", "127.0.0.1", "--port", "0", env=env)
    try:
        assert json.loads(ready_file.read_text()) == process.ready
        result = minibroker("check", env=env)
        assert result.returncode == 0, result.stderr
        assert f"127.0.0.1:{process.ready['nodes'][0]['port']} is up" in result.stdout
    finally:
        process.stop()


def test_a_stale_ready_file_is_removed_at_start_up(tmp_path):
    ready_file = tmp_path / "ready.json"
    ready_file.write_text('{"event": "ready", "nodes": [{"host": "127.0.0.1", "port": 1}]}\n')
    result = minibroker("serve", "--port", "0", "--set", "no.such.config=1", "--ready-file", str(ready_file))
    assert result.returncode == 2
    assert not ready_file.exists()


def test_a_stopped_broker_process_leaves_no_log_file_and_keeps_its_log():
    process = start_broker()
    assert process.log_path.is_file()
    assert process.stop() == 0  # a SIGTERM right after the ready line is a clean stop, not a kill
    assert not process.log_path.exists()
    assert "minibroker stopped" in process.log_text()
