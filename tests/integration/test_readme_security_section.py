"""The README's Security section works as written: its server.properties, its command line, its client settings."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, Producer

from minibroker.testing.process import stop_process

README = Path(__file__).resolve().parents[2] / "README.md"


def section() -> str:
    text = README.read_text()
    return text[text.index("## Security"):text.index("## Container")]


def start_readme_broker(tmp_path: Path, properties: str) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    """The README's command with `properties`, on free ports; the process and its listeners by name."""
    text = section()
    properties = re.sub(r"127\.0\.0\.1:909\d", "127.0.0.1:0", properties)  # any free ports
    properties = properties.replace("/tmp/pki", str(tmp_path / "pki"))
    (tmp_path / "server.properties").write_text(properties)
    command = re.search(r"```sh\n(minibroker serve .*?)```", text, re.S).group(1).replace("\\\n", " ")
    argv = shlex.split(command.replace("/tmp/pki", str(tmp_path / "pki")))
    assert argv[:4] == ["minibroker", "serve", "--config", "server.properties"]
    ready_file = tmp_path / "ready.json"
    popen = subprocess.Popen([sys.executable, "-m", "minibroker", "serve", "--config",
                              str(tmp_path / "server.properties"), *argv[4:], "--ready-file", str(ready_file)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not ready_file.exists():
        if time.monotonic() > deadline or popen.poll() is not None:
            stop_process(popen)
            raise AssertionError("the README's broker did not start")
        time.sleep(0.02)
    listeners = {e["name"]: e for e in json.loads(ready_file.read_text())["nodes"][0]["listeners"]}
    return popen, listeners


def alice_settings(tmp_path: Path) -> dict[str, str]:
    row = re.search(r"\| confluent-kafka, kcat \(`-X`\) \| (.*?) \|\n", section()).group(1)
    settings = dict(item.strip("` ").split("=", 1) for item in row.split(", "))
    settings["ssl.ca.location"] = settings["ssl.ca.location"].replace("/tmp/pki", str(tmp_path / "pki"))
    return settings


def produce_errors(settings: dict[str, Any], topic: str) -> list[Any]:
    errors: list[Any] = []
    producer = Producer({**settings, "message.timeout.ms": 20000})
    producer.produce(topic, b"x", on_delivery=lambda error, _message: errors.append(error))
    assert producer.flush(30) == 0
    return errors


def test_the_readme_security_properties_and_command_start_a_broker_clients_log_in_to(tmp_path: Path) -> None:
    properties = re.search(r"```properties\n(.*?)```", section(), re.S).group(1)
    popen, listeners = start_readme_broker(tmp_path, properties)
    try:
        settings = alice_settings(tmp_path)
        for listener, extra in (("SASL_SSL", {}),
                                ("SASL_PLAINTEXT", {"security.protocol": "SASL_PLAINTEXT"})):
            port = listeners[listener]["advertised_port"]
            assert produce_errors({**settings, **extra, "bootstrap.servers": f"localhost:{port}"}, "readme") == \
                [None], listener
    finally:
        stop_process(popen)


def test_the_readme_acl_properties_and_admin_snippet_let_alice_write_only_where_allowed(tmp_path: Path) -> None:
    blocks = re.findall(r"```properties\n(.*?)```", section(), re.S)
    popen, listeners = start_readme_broker(tmp_path, blocks[0] + blocks[1])
    try:
        snippet = re.search(r"### ACLs.*?```python\n(.*?)```", section(), re.S).group(1)
        exec(snippet.replace("127.0.0.1:9094", f"127.0.0.1:{listeners['SASL_PLAINTEXT']['advertised_port']}"), {})
        port = listeners["SASL_SSL"]["advertised_port"]
        settings = {**alice_settings(tmp_path), "bootstrap.servers": f"localhost:{port}"}
        assert produce_errors(settings, "readme") == [None]
        (refused,) = produce_errors(settings, "elsewhere")
        assert refused.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    finally:
        stop_process(popen)
