"""The README's Security section works as written: its server.properties, its command line, its client settings
(SASL and mutual TLS with the client certificate the command generates), and what it says of librdkafka's SCRAM."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, Producer
from kafka import KafkaProducer

from minibroker.testing.process import stop_process
from tests.helpers import read_ready_file
from tests.integration.clients import require_binary, run_client

README = Path(__file__).resolve().parents[2] / "README.md"


def section() -> str:
    text = README.read_text()
    return text[text.index("## Security"):text.index("## Container")]


def start_readme_broker(tmp_path: Path, properties: str) -> tuple[subprocess.Popen[bytes], dict[str, Any]]:
    """The README's command with `properties`, on free ports; the process and its listeners by name (its log is
    tmp_path/broker.log)."""
    text = section()
    properties = re.sub(r"127\.0\.0\.1:909\d", "127.0.0.1:0", properties)  # any free ports
    properties = properties.replace("/tmp/pki", str(tmp_path / "pki"))
    (tmp_path / "server.properties").write_text(properties)
    command = re.search(r"```sh\n(minibroker serve .*?)```", text, re.S).group(1).replace("\\\n", " ")
    argv = shlex.split(command.replace("/tmp/pki", str(tmp_path / "pki")))
    assert argv[:4] == ["minibroker", "serve", "--config", "server.properties"]
    ready_file = tmp_path / "ready.json"
    with open(tmp_path / "broker.log", "wb") as log:
        popen = subprocess.Popen([sys.executable, "-m", "minibroker", "serve", "--config",
                                  str(tmp_path / "server.properties"), *argv[4:], "--ready-file", str(ready_file)],
                                 stdout=subprocess.DEVNULL, stderr=log)
    try:
        ready = read_ready_file(popen, ready_file)
    except AssertionError as error:
        stop_process(popen)
        raise AssertionError("the README's broker did not start") from error
    listeners = {e["name"]: e for e in ready["nodes"][0]["listeners"]}
    return popen, listeners


def row_settings(client: str, tmp_path: Path) -> dict[str, str]:
    """The settings of a client table's row, `key=value` items, with the README's /tmp/pki moved to tmp_path."""
    row = re.search(rf"\| {re.escape(client)} \| (.*?) \|\n", section()).group(1)
    items = dict(item.strip("` ").split("=", 1) for item in row.split(", "))
    return {key: value.strip('"').replace("/tmp/pki", str(tmp_path / "pki")) for key, value in items.items()}


def alice_settings(tmp_path: Path) -> dict[str, str]:
    return row_settings("confluent-kafka, kcat (`-X`)", tmp_path)


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


def test_the_readme_mutual_tls_settings_log_in_with_the_generated_client_certificate(tmp_path: Path) -> None:
    properties = re.search(r"```properties\n(.*?)```", section(), re.S).group(1)
    assert "listener.name.ssl.ssl.client.auth=required" in properties
    popen, listeners = start_readme_broker(tmp_path, properties)
    try:
        servers = f"localhost:{listeners['SSL']['advertised_port']}"
        settings = row_settings("confluent-kafka, kcat (`-X`), mutual TLS", tmp_path)
        assert produce_errors({**settings, "bootstrap.servers": servers}, "mtls") == [None]
        python = row_settings("kafka-python, mutual TLS", tmp_path)
        producer = KafkaProducer(bootstrap_servers=servers, **python)
        try:
            assert producer.send("mtls", b"kafka-python").get(timeout=30).offset == 1
        finally:
            producer.close()
        # without a certificate the handshake fails, and the client hears of it
        errors: list[Any] = []
        anonymous = Producer({"bootstrap.servers": servers, "security.protocol": "SSL",
                              "ssl.ca.location": settings["ssl.ca.location"], "message.timeout.ms": 5000,
                              "error_cb": errors.append})
        reports: list[Any] = []
        anonymous.produce("mtls", b"refused", on_delivery=lambda error, _message: reports.append(error))
        anonymous.flush(20)
        assert reports[0].code() == KafkaError._MSG_TIMED_OUT
        assert errors and all(error.code() in (KafkaError._SSL, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN)
                              for error in errors), errors
    finally:
        stop_process(popen)
    # and the broker says so, as the README shows
    shown = re.search(r"closing connection from [\d.:]+: SSL handshake failed:\s+\[SSL: ([A-Z_]+)\]", section())
    assert shown, "the Security section shows the failed handshake's log line"
    log = (tmp_path / "broker.log").read_text()
    assert re.search(rf"INFO minibroker.connection: closing connection from 127\.0\.0\.1:\d+: SSL handshake failed: "
                     rf"\[SSL: {shown[1]}\]", log), log


def scram_minimum() -> tuple[int, ...]:
    """The librdkafka release the README says SCRAM needs."""
    found = re.search(r"SCRAM needs librdkafka (\d+)\.(\d+)\.(\d+) or later", section())
    assert found, "the Security section says which librdkafka SCRAM needs"
    return tuple(int(part) for part in found.groups())


def test_the_readme_says_which_librdkafka_scram_needs_and_that_debians_kcat_has_an_older_one() -> None:
    bundled = tuple(int(part) for part in confluent_kafka.libversion()[0].split(".")[:3])
    assert bundled >= scram_minimum()  # and the first test logs confluent-kafka in with SCRAM-SHA-512
    kcat_row = re.search(r"\| kcat \| Debian's [\d.]+ \(librdkafka (\d+)\.(\d+)\.(\d+)\) \| (.*?) \|",
                         README.read_text())
    assert kcat_row, "the Clients table names Debian's kcat and its librdkafka"
    assert tuple(int(part) for part in kcat_row.groups()[:3]) < scram_minimum()
    assert "SCRAM" in kcat_row[4] and "refused" in kcat_row[4]


@pytest.mark.kcat
def test_kcat_logs_in_with_scram_as_the_readme_says_for_its_librdkafka(tmp_path: Path) -> None:
    kcat = require_binary("kcat")
    version = re.search(r"librdkafka (\d+)\.(\d+)\.(\d+)", run_client([kcat, "-V"]).check().stdout)
    assert version
    properties = re.search(r"```properties\n(.*?)```", section(), re.S).group(1)
    popen, listeners = start_readme_broker(tmp_path, properties)
    try:
        settings = {**alice_settings(tmp_path), "message.timeout.ms": "10000"}
        options = ["-b", f"localhost:{listeners['SASL_SSL']['advertised_port']}"]
        for key, value in settings.items():
            options += ["-X", f"{key}={value}"]
        run = run_client([kcat, "-P", *options, "-t", "readme"], input="from kcat\n")
        if tuple(int(part) for part in version.groups()) >= scram_minimum():
            run.check()
        else:
            assert run.returncode != 0 and "Authentication failed" in run.stderr, run.describe()
    finally:
        stop_process(popen)
