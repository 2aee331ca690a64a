"""The `minibroker` pytest plugin, run as a user runs it: test files with no conftest, through pytester."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

pytest_plugins = ["pytester"]


def run(pytester: pytest.Pytester, source: str, *args: str, ini: str = "") -> pytest.RunResult:
    """Run `source` as a user's test file in a subprocess (the plugin loads from its entry point)."""
    pytester.makeini(f"[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n{ini}")
    pytester.makepyfile(test_user=source)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=120)


def test_blocking_client_flushes_against_the_session_broker(pytester: pytest.Pytester) -> None:
    # On the test's own thread, Broker would starve while flush() blocks; BrokerThread has its own loop.
    result = run(pytester, """
        from confluent_kafka import Consumer, Producer

        def test_produce_and_consume(kafka_broker, kafka_topic):
            producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
            for i in range(3):
                producer.produce(kafka_topic, b"value-%d" % i)
            assert producer.flush(10) == 0
            consumer = Consumer({"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": "g",
                                 "auto.offset.reset": "earliest"})
            consumer.subscribe([kafka_topic])
            values = []
            while len(values) < 3:
                message = consumer.poll(10)
                assert message is not None and message.error() is None
                values.append(message.value())
            consumer.close()
            assert values == [b"value-0", b"value-1", b"value-2"]
    """)
    result.assert_outcomes(passed=1)


def test_kafka_topic_is_fresh_configured_by_its_marker_and_deleted_after(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        import pytest
        seen = []

        @pytest.mark.kafka_topic(partitions=3, config={"retention.ms": 1000, "cleanup.policy": "compact"})
        def test_marked(kafka_broker, kafka_topic):
            topic = kafka_broker.cluster.topics[kafka_topic]
            assert len(topic.partitions) == 3
            assert dict(topic.configs) == {"retention.ms": 1000, "cleanup.policy": ["compact"]}
            assert kafka_topic.startswith("test_marked-")
            seen.append(kafka_topic)

        def test_default_and_previous_deleted(kafka_broker, kafka_topic):
            assert len(kafka_broker.cluster.topics[kafka_topic].partitions) == 1
            assert kafka_topic not in seen and seen[0] not in kafka_broker.cluster.topics
    """)
    result.assert_outcomes(passed=2)


def test_kafka_topic_with_a_config_kafka_refuses_errors_with_kafkas_message(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        import pytest

        @pytest.mark.kafka_topic(config={"cleanup.policy": "bogus"})
        def test_bad(kafka_topic):
            pass
    """)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*INVALID_CONFIG (40): Invalid value bogus for configuration cleanup.policy*"])


def test_factory_brokers_take_broker_options_and_stop_after_the_test(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        import socket
        import pytest
        from kafka import KafkaAdminClient
        started = []

        def test_cluster(kafka_broker_factory):
            cluster = kafka_broker_factory(nodes=3, as_version="3.9", node_releases={1: "4.0"},
                                           config={"num.partitions": "4"})
            admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers)
            assert len(admin.describe_cluster()["brokers"]) == 3
            admin.close()
            assert [node.release for node in cluster.cluster.nodes] == ["3.9", "4.0", "3.9"]
            assert cluster.cluster.config["num.partitions"] == 4
            started.append(cluster)

        def test_stopped_after(kafka_broker_factory):
            assert not started[0].running
            host, port = started[0].bootstrap_servers.split(",")[0].split(":")
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection((host, int(port)), timeout=5)
    """)
    result.assert_outcomes(passed=2)


def test_session_broker_takes_command_line_and_ini_options(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        from minibroker.apis.releases import release

        def test_options(kafka_broker):
            assert kafka_broker.cluster.config["num.partitions"] == 7
            assert kafka_broker.cluster.config["default.replication.factor"] == 1
            assert {node.release for node in kafka_broker.cluster.nodes} == {"3.9"}
    """, "--minibroker-config", "num.partitions=7", ini="minibroker_as_version = 3.9\n")
    result.assert_outcomes(passed=1)


def test_test_control_from_a_test_runs_on_the_broker_thread(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        from confluent_kafka import KafkaException, Producer
        import pytest

        def test_injected_error(kafka_broker, kafka_topic):
            kafka_broker.control.inject_error("produce", error_code=87, count=None, topic=kafka_topic)
            try:
                producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers, "retries": 0})
                reports = []
                producer.produce(kafka_topic, b"x", on_delivery=lambda err, msg: reports.append(err))
                producer.flush(10)
                assert reports[0].name() == "INVALID_RECORD"
            finally:
                kafka_broker.control.clear()
            assert kafka_broker.control.status()["rules"] == []
    """)
    result.assert_outcomes(passed=1)


def test_process_mode_session_broker_can_be_killed(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        import os, signal
        from kafka import KafkaProducer

        def test_topic_then_kill(kafka_broker, kafka_topic):
            assert kafka_broker.pid != os.getpid()
            producer = KafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers)
            assert producer.send(kafka_topic, b"x").get(timeout=10).offset == 0
            producer.close()
            kafka_broker.control.hold(kafka_topic, 0)
            assert kafka_broker.control.status()["holding"] == [f"{kafka_topic}-0"]
            os.kill(kafka_broker.pid, signal.SIGKILL)
    """, "--minibroker-process")
    result.assert_outcomes(passed=1)


def test_async_client_on_any_loop_scope(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        import pytest
        from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

        @pytest.mark.asyncio(loop_scope="module")
        async def test_roundtrip(kafka_broker, kafka_topic):
            async with AIOKafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers) as producer:
                await producer.send_and_wait(kafka_topic, b"async")
            consumer = AIOKafkaConsumer(kafka_topic, bootstrap_servers=kafka_broker.bootstrap_servers,
                                        auto_offset_reset="earliest")
            await consumer.start()
            try:
                message = await consumer.getone()
            finally:
                await consumer.stop()
            assert message.value == b"async"
    """)
    result.assert_outcomes(passed=1)


def test_kafka_python_import_warnings_do_not_reach_the_users_run(pytester: pytest.Pytester) -> None:
    # kafka-python 3.0 loads its JSON definitions with a deprecated importlib.resources call: 218+ warnings
    pytester.makeconftest("import kafka\n")
    result = run(pytester, """
        import warnings
        from kafka import KafkaProducer

        def test_own_warnings_still_show():
            warnings.warn("the user's own", DeprecationWarning)
    """)
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines(["*the user's own*"])
    result.stdout.no_fnmatch_line("*read_text is deprecated*")


def test_the_secure_session_broker_serves_confluent_kafka_over_every_listener(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        import pytest
        from confluent_kafka import Producer

        @pytest.mark.parametrize("listener, mechanism", [
            ("SSL", None), ("SASL_PLAINTEXT", "PLAIN"), ("SASL_SSL", "SCRAM-SHA-512"), ("SASL_SSL", "SCRAM-SHA-256")])
        def test_produce(kafka_secure_broker, listener, mechanism):
            settings = kafka_secure_broker.security.librdkafka(listener, mechanism or "PLAIN")
            producer = Producer({**settings, "message.timeout.ms": 20000})
            producer.produce("secure-topic", b"x")
            assert producer.flush(30) == 0

        def test_wrong_password(kafka_secure_broker):
            errors = []
            settings = kafka_secure_broker.security.librdkafka("SASL_SSL", "SCRAM-SHA-512", password="nope")
            producer = Producer({**settings, "message.timeout.ms": 3000})
            producer.produce("secure-topic", b"x", on_delivery=lambda err, msg: errors.append(err))
            producer.flush(10)
            assert errors and errors[0] is not None

        def test_factory_secure_broker(kafka_broker_factory):
            broker = kafka_broker_factory(secure=True, config={"ssl.client.auth": "required"})
            assert broker.security.ca_path.is_file()
            assert "ssl.truststore.location" in broker.security.java("SSL")
    """)
    result.assert_outcomes(passed=6)


# -- the session broker as a process: restarted after a kill, gone with pytest -----------------------------------


def test_a_killed_process_broker_is_restarted_on_its_port_for_the_next_test(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        import os, signal
        from kafka import KafkaProducer
        seen = {}

        def test_kill(kafka_broker, kafka_topic):
            seen["pid"], seen["servers"] = kafka_broker.pid, kafka_broker.bootstrap_servers
            kafka_broker.control.inject_error("produce", error_code=87, count=None)
            os.kill(kafka_broker.pid, signal.SIGKILL)

        def test_next(kafka_broker, kafka_topic):
            assert kafka_broker.pid != seen["pid"] and kafka_broker.running
            assert kafka_broker.bootstrap_servers == seen["servers"]  # clients configured before the kill reconnect
            producer = KafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers)
            assert producer.send(kafka_topic, b"x").get(timeout=10).offset == 0
            producer.close()
            assert kafka_broker.control.status()["rules"] == []  # a fresh broker: nothing of the killed one
    """, "--minibroker-process")
    result.assert_outcomes(passed=2)


def test_process_mode_has_no_cluster_attribute(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        def test_it(kafka_broker):
            assert not hasattr(kafka_broker, "cluster")
    """, "--minibroker-process")
    result.assert_outcomes(passed=1)


def gone(pid: int) -> bool:
    """No such process, or only its zombie (whoever reaps orphans here may be slow to)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_broker_processes_end_with_a_pytest_that_is_sent_sigterm(pytester: pytest.Pytester) -> None:
    pids_file = pytester.path / "pids"
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_user=f"""
        import threading
        from pathlib import Path
        from minibroker.testing.process import start_broker

        def test_waits_to_be_terminated(kafka_broker):
            other = start_broker()
            Path({str(pids_file)!r}).write_text(f"{{kafka_broker.pid}} {{other.pid}}")
            threading.Event().wait(300)
    """)
    with open(pytester.path / "output", "wb") as output:
        session = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--minibroker-process"],
                                   cwd=pytester.path, stdout=output, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not pids_file.exists() and session.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pids_file.exists(), (pytester.path / "output").read_text()
        pids = [int(pid) for pid in pids_file.read_text().split()]
        assert not any(gone(pid) for pid in pids)
        os.kill(session.pid, signal.SIGTERM)
        session.wait(30)
    finally:
        if session.poll() is None:
            session.kill()
            session.wait()
    deadline = time.monotonic() + 30
    while not all(gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert all(gone(pid) for pid in pids)
    finally:
        for pid in pids:  # whatever the outcome, leave nothing running
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)


# -- options checked once, at start ----------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "ini", "message"), [
    (("--minibroker-config", "num.partitions=many"), "",
     "Invalid value many for configuration num.partitions"),
    (("--minibroker-config", "no.such.config=1"), "", "Unknown broker config name: no.such.config"),
    (("--minibroker-as-version", "1.0"), "", "unknown Kafka release '1.0'"),
    ((), "minibroker_as_version = 9.9\n", "unknown Kafka release '9.9'"),
    (("--minibroker-config", "num.partitions"), "", "expected KEY=VALUE for a broker config, got 'num.partitions'"),
])
def test_a_bad_session_broker_option_is_one_usage_error(pytester: pytest.Pytester, args, ini, message) -> None:
    result = run(pytester, """
        def test_one(kafka_broker):
            pass

        def test_two(kafka_broker):
            pass
    """, *args, ini=ini)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output, output
    (line,) = [line for line in result.stderr.lines if message in line]
    assert line.startswith("ERROR: minibroker: "), output
    assert "test_one" not in output and "test_two" not in output
