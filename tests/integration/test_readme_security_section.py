"""The README's Security section works as written: its server.properties, its command line, its client settings."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

from confluent_kafka import Producer

from minibroker.testing.process import stop_process

README = Path(__file__).resolve().parents[2] / "README.md"


def section() -> str:
    text = README.read_text()
    return text[text.index("## Security"):text.index("## Container")]


def test_the_readme_security_properties_and_command_start_a_broker_clients_log_in_to(tmp_path: Path) -> None:
    text = section()
    properties = re.search(r"```properties\n(.*?)```", text, re.S).group(1)
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
    try:
        deadline = time.monotonic() + 20
        while not ready_file.exists():
            assert time.monotonic() < deadline and popen.poll() is None
            time.sleep(0.02)
        listeners = {e["name"]: e for e in json.loads(ready_file.read_text())["nodes"][0]["listeners"]}
        row = re.search(r"\| confluent-kafka, kcat \(`-X`\) \| (.*?) \|\n", text).group(1)
        settings = dict(item.strip("` ").split("=", 1) for item in row.split(", "))
        settings["ssl.ca.location"] = settings["ssl.ca.location"].replace("/tmp/pki", str(tmp_path / "pki"))
        for listener, extra in (("SASL_SSL", {}),
                                ("SASL_PLAINTEXT", {"security.protocol": "SASL_PLAINTEXT"})):
            port = listeners[listener]["advertised_port"]
            producer = Producer({**settings, **extra, "bootstrap.servers": f"localhost:{port}",
                                 "message.timeout.ms": 20000})
            producer.produce("readme", b"x")
            assert producer.flush(30) == 0, listener
    finally:
        stop_process(popen)
