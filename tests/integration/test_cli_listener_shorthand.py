"""`minibroker serve`'s --host/--port shorthand for one PLAINTEXT listener, combined with Kafka's own
`listeners`/`advertised.listeners` configs: what starts, what Metadata then tells clients, what is refused."""

from __future__ import annotations

import subprocess
import sys

import pytest

from minibroker.protocol.messages import MetadataRequest
from minibroker.testing.process import start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import free_port

START_TIMEOUT_S = 60.0  # the interpreter's start alone takes seconds on a loaded 2-core machine


def advertised_brokers(host: str, port: int) -> list[tuple[int, str, int]]:
    with WireClient(host, port) as wire:
        brokers = wire.request(MetadataRequest(topics=[]), 12).brokers
    return sorted((b.node_id, b.host, b.port) for b in brokers)


def test_port_with_advertised_listeners_naming_the_same_address_starts():
    port = free_port()
    process = start_broker(f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}", extra_args=("--port", str(port)),
                           timeout=START_TIMEOUT_S)
    try:
        assert process.port == port
        assert advertised_brokers(process.host, port) == [(0, "127.0.0.1", port)]
    finally:
        process.stop()


def test_advertised_listeners_name_another_address_for_the_shorthand_listener():
    process = start_broker("advertised.listeners=PLAINTEXT://proxy.example:19092", extra_args=("--nodes", "2"),
                           timeout=START_TIMEOUT_S)
    try:
        # node i adds i to the advertised port, as it does to every port of `listeners`
        assert advertised_brokers(process.host, process.port) == [(0, "proxy.example", 19092),
                                                                  (1, "proxy.example", 19093)]
    finally:
        process.stop()


def test_advertised_listeners_without_a_port_follow_the_bound_port():
    process = start_broker("advertised.listeners=PLAINTEXT://proxy.example:0", timeout=START_TIMEOUT_S)
    try:
        assert advertised_brokers(process.host, process.port) == [(0, "proxy.example", process.port)]
    finally:
        process.stop()


@pytest.mark.parametrize(("args", "expected"), [
    # Kafka's default `listeners` is one PLAINTEXT listener, as the shorthand's: other names are not listeners
    (("--set", "advertised.listeners=EXTERNAL://proxy.example:19092",
      "--set", "listener.security.protocol.map=EXTERNAL:PLAINTEXT,PLAINTEXT:PLAINTEXT"),
     "requirement failed: advertised.listeners listener names must be equal to or a subset of the ones defined "
     "in listeners"),
    (("--set", "advertised.listeners=PLAINTEXT://0.0.0.0:19092"),
     "requirement failed: advertised.listeners cannot use the nonroutable meta-address 0.0.0.0"),
    # two ways of saying one thing: refused rather than one of them silently ignored
    (("--advertised-listeners", "proxy.example:1", "--set", "advertised.listeners=PLAINTEXT://other.example:2"),
     "--advertised-listeners and advertised.listeners both give the advertised address: use one"),
    (("--advertised-listeners", "proxy.example:1", "--set", "listeners=PLAINTEXT://127.0.0.1:0"),
     "--advertised-listeners gives the address of the --host/--port listener; with listeners set, use "
     "advertised.listeners"),
])
def test_contradictory_listener_options_refuse_to_start(args, expected):
    result = subprocess.run([sys.executable, "-m", "minibroker", "serve", "--port", "0", *args],
                            capture_output=True, text=True, timeout=START_TIMEOUT_S)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("minibroker: refusing to start: "), result.stderr
    assert expected in result.stderr


def test_listeners_win_over_the_port_shorthand():
    port = free_port()
    process = start_broker(f"listeners=PLAINTEXT://127.0.0.1:{port}", extra_args=("--port", str(free_port())),
                           timeout=START_TIMEOUT_S)
    try:
        assert process.port == port
        assert advertised_brokers(process.host, port) == [(0, "127.0.0.1", port)]
    finally:
        process.stop()
