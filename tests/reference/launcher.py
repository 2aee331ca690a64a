"""Start and stop a real Apache Kafka broker: one KRaft combined node (broker + controller) on 127.0.0.1.

The jars come from scripts/install-reference-kafka.sh (.cache/kafka/<version>). `ReferenceKafka.start()`
formats storage with Kafka's StorageTool in a temporary folder with a fixed cluster id, starts the JVM on
free ports and returns once the broker port answers ApiVersions; `stop()` ends it by PID and removes the
folder. Kafka's defaults everywhere except what one node needs (`ONE_NODE`); a test's `config` is set on top.
Its `listeners` (`NAME://host:port`, PLAINTEXT first, port 0 for a free one) are the broker's listeners; the
launcher adds the CONTROLLER one. The test run's reference has REFERENCE_CONFIG (a SASL_PLAINTEXT listener and
StandardAuthorizer), and so does one started by hand with `python -m tests.reference.launcher`.

    kafka = ReferenceKafka.start(config={"group.initial.rebalance.delay.ms": "0"})
    try:
        ... kafka.bootstrap_servers ...
    finally:
        kafka.stop()
"""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from minibroker.protocol.messages import ApiVersionsRequest
from minibroker.testing.wire import WireClient
from tests.helpers import free_port

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "kafka"
LOG4J2 = Path(__file__).resolve().parent / "log4j2.properties"
#: Kafka before 4.0 logs through reload4j (log4j 1), which reads this one.
LOG4J1 = Path(__file__).resolve().parent / "log4j.properties"
INSTALL_HINT = "run scripts/install-reference-kafka.sh"

DEFAULT_VERSION = "4.3.1"
#: The cluster id every reference broker is formatted with (base64 of b"minibroker-kafka"), so answers that
#: carry it are the same from run to run.
CLUSTER_ID = "bWluaWJyb2tlci1rYWZrYQ"
NODE_ID = 1
#: The Kafka release (newest patch) each release profile of minibroker/apis/releases.py is compared with.
RELEASE_VERSIONS: Mapping[str, str] = {"2.8": "2.8.2", "3.9": "3.9.1", "4.0": "4.0.2", "4.1": "4.1.2", "4.2": "4.2.2",
                                       "4.3": "4.3.1", "4.4": "4.4.0"}
#: Feature levels set at format time beyond Kafka's defaults: none (a 4.x StorageTool finalizes transaction.version
#: 2, transactions V2, which minibroker speaks too).
DEFAULT_FEATURES: Mapping[str, int] = {}
#: What one node needs beyond Kafka's defaults: its internal topics cannot have 3 replicas on one broker.
ONE_NODE: Mapping[str, str] = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}
#: The PLAIN users of the reference's SASL_PLAINTEXT listener (JAAS `user_<name>` entries): admin is a super user.
SASL_USERS: Mapping[str, str] = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}
_PLAIN_JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
               + " ".join(f'user_{name}="{password}"' for name, password in SASL_USERS.items()) + ";")
_SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
#: The configs of the test run's one reference node (tests/reference/fixtures.py), set on minibroker too: a second
#: listener, SASL_PLAINTEXT with PLAIN and SCRAM, and Kafka's StandardAuthorizer, so the differential suite
#: compares ACL refusals and SASL errors. User:ANONYMOUS (the PLAINTEXT listener's and the controller's principal)
#: is a super user, so whatever uses the PLAINTEXT listener is answered as without an authorizer. A listener
#: given with port 0 gets a free port.
REFERENCE_CONFIG: Mapping[str, str] = {
    "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:ANONYMOUS;User:admin",
    "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": _PLAIN_JAAS,
    "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": _SCRAM_JAAS,
    "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": _SCRAM_JAAS,
}
#: A heap sized for a 2-core test machine that runs other things too.
JVM_OPTS = ("-Xms256m", "-Xmx1g", "-Djava.awt.headless=true")
READY_TIMEOUT_S = 120.0  # the JVM took about 40 s on a loaded 2-core machine
STOP_TIMEOUT_S = 30.0


def default_features(version: str) -> dict[str, int]:
    """The feature levels a node of Kafka `version` is formatted with: DEFAULT_FEATURES from 4.0 on, none before
    (3.9's StorageTool refuses transaction.version 1; its defaults leave transactions at V1 anyway)."""
    return dict(DEFAULT_FEATURES) if int(version.split(".")[0]) >= 4 else {}


class ReferenceUnavailable(RuntimeError):
    """Java or the reference Kafka's jars are not installed."""


def jar_dir(version: str = DEFAULT_VERSION) -> Path:
    """The folder holding Kafka `version`'s jars; ReferenceUnavailable when java or the jars are missing."""
    if shutil.which("java") is None:
        raise ReferenceUnavailable("the 'java' executable")
    directory = CACHE / version
    if not (directory / ".installed").is_file() or not (directory / f"kafka_2.13-{version}.jar").is_file():
        raise ReferenceUnavailable(f"Apache Kafka {version}'s jars in {directory}")
    return directory


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL it when the process that started it dies, so no JVM outlives a
    test run that was killed (Linux prctl PR_SET_PDEATHSIG; elsewhere stop() and atexit are all there is)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (AttributeError, OSError):
        pass


@dataclass
class ReferenceKafka:
    """A running Apache Kafka node; `stop()` ends it by its PID and removes its folder."""

    version: str
    host: str
    port: int
    controller_port: int
    directory: Path
    config: dict[str, str]
    features: dict[str, int]
    startup_s: float  # from starting the JVM to the first answered ApiVersions
    _popen: subprocess.Popen[bytes] = field(repr=False)

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.directory / "kafka.log"

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def alive(self) -> bool:
        return self._popen.poll() is None

    @classmethod
    def start(cls, version: str = DEFAULT_VERSION, config: Mapping[str, str] | None = None,
              features: Mapping[str, int] | None = None, timeout: float = READY_TIMEOUT_S) -> ReferenceKafka:
        """Format a fresh node and start it; returns once its broker port has answered ApiVersions.

        `config` is set on top of Kafka's defaults and ONE_NODE; `features` are feature levels given to the
        StorageTool (`--feature name=level`), `default_features(version)` when not given. ReferenceUnavailable
        without java or the jars.
        """
        jars = jar_dir(version)
        features = default_features(version) if features is None else features
        last_error: RuntimeError | None = None
        for _attempt in range(3):  # a free port taken by another process before the JVM bound it: new ports
            directory = Path(tempfile.mkdtemp(prefix=f"kafka-{version}-"))
            try:
                return cls._start_in(directory, jars, version, dict(config or {}), dict(features), timeout)
            except _PortTaken as exc:
                shutil.rmtree(directory, ignore_errors=True)
                last_error = exc
            except BaseException:
                shutil.rmtree(directory, ignore_errors=True)
                raise
        assert last_error is not None
        raise last_error

    @classmethod
    def _start_in(cls, directory: Path, jars: Path, version: str, config: dict[str, str],
                  features: dict[str, int], timeout: float) -> ReferenceKafka:
        host, controller_port = "127.0.0.1", free_port()
        listeners = _broker_listeners(config.get("listeners", "PLAINTEXT://127.0.0.1:0"))
        port = listeners[0][2]
        broker_listeners = ",".join(f"{name}://{address}:{number}" for name, address, number in listeners)
        protocols = "".join(f"{name}:{name}," for name, _, _ in listeners)  # Kafka's names: name == protocol
        properties = {
            "process.roles": "broker,controller",
            "node.id": str(NODE_ID),
            "controller.quorum.voters": f"{NODE_ID}@{host}:{controller_port}",
            "controller.listener.names": "CONTROLLER",
            "log.dirs": str(directory / "data"),
            **ONE_NODE,
            **config,
            "listeners": f"{broker_listeners},CONTROLLER://{host}:{controller_port}",
            "advertised.listeners": broker_listeners,
            "listener.security.protocol.map": f"{protocols}CONTROLLER:PLAINTEXT",
        }
        server_properties = directory / "server.properties"
        server_properties.write_text("".join(f"{key}={value}\n" for key, value in properties.items()))
        java = ["java", "-cp", f"{jars}/*", f"-Dlog4j2.configurationFile={LOG4J2}",
                f"-Dlog4j.configuration=file:{LOG4J1}"]
        feature_args = [arg for name, level in features.items() for arg in ("--feature", f"{name}={level}")]
        with open(directory / "format.log", "wb") as out:
            formatted = subprocess.run([*java, "kafka.tools.StorageTool", "format", "--cluster-id", CLUSTER_ID,
                                        "--config", str(server_properties), *feature_args],
                                       stdout=out, stderr=subprocess.STDOUT, timeout=timeout,
                                       preexec_fn=_die_with_parent)
        if formatted.returncode != 0:
            raise RuntimeError(f"Kafka {version}'s StorageTool format failed ({formatted.returncode}):\n"
                               + (directory / "format.log").read_text(errors="replace")[-4000:])
        started = time.monotonic()
        with open(directory / "kafka.log", "wb") as out:
            popen = subprocess.Popen([java[0], *JVM_OPTS, *java[1:], "kafka.Kafka", str(server_properties)],
                                     stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     preexec_fn=_die_with_parent)
        kafka = cls(version, host, port, controller_port, directory, config, features, 0.0, popen)
        atexit.register(kafka.stop)
        try:
            kafka._wait_ready(started + timeout)
        except BaseException:
            kafka.stop(keep_directory=True)
            log = kafka.log_text()
            shutil.rmtree(directory, ignore_errors=True)
            if "Address already in use" in log:
                raise _PortTaken(f"port {port} or {controller_port} was taken") from None
            raise
        kafka.startup_s = time.monotonic() - started
        return kafka

    def _wait_ready(self, deadline: float) -> None:
        """Poll ApiVersions on the broker port until it is answered without error, the JVM exits or time is up."""
        while True:
            if not self.alive():
                raise RuntimeError(f"Kafka {self.version} exited with {self._popen.returncode}:\n"
                                   + self.log_text()[-4000:])
            try:
                with WireClient(self.host, self.port, client_id="reference-ready", timeout=5.0) as wire:
                    if wire.request(ApiVersionsRequest(), 0).error_code == 0:
                        return
            except OSError:  # not listening yet, or closed while starting
                pass
            if time.monotonic() >= deadline:
                raise TimeoutError(f"Kafka {self.version} did not answer ApiVersions on {self.bootstrap_servers} "
                                   f"in time:\n" + self.log_text()[-4000:])
            time.sleep(0.25)

    def stop(self, timeout: float = STOP_TIMEOUT_S, keep_directory: bool = False) -> int | None:
        """SIGTERM by PID, then SIGKILL after `timeout`; removes the folder; the exit code."""
        atexit.unregister(self.stop)
        if self._popen.poll() is None:
            os.kill(self._popen.pid, signal.SIGTERM)
            try:
                self._popen.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self._popen.pid, signal.SIGKILL)
                self._popen.wait(timeout)
        code = self._popen.returncode
        if not keep_directory:
            shutil.rmtree(self.directory, ignore_errors=True)
        return code


def _broker_listeners(listeners: str) -> list[tuple[str, str, int]]:
    """`listeners` as (name, host, port), port 0 replaced by a free port; the first is PLAINTEXT (the port
    `bootstrap_servers` names, which tests reach without logging in)."""
    parsed = []
    for item in listeners.split(","):
        name, _, address = item.strip().partition("://")
        address_host, _, number = address.rpartition(":")
        parsed.append((name, address_host, int(number) or free_port()))
    if parsed[0][0] != "PLAINTEXT":
        raise ValueError(f"the reference's first listener must be PLAINTEXT: {listeners}")
    return parsed


class _PortTaken(RuntimeError):
    """The JVM could not bind a port picked as free."""


if __name__ == "__main__":  # start one by hand, as the test run's: python -m tests.reference.launcher [version]
    for signum in (signal.SIGINT, signal.SIGTERM):  # also when started in the background, where SIGINT is ignored
        signal.signal(signum, signal.default_int_handler)
    kafka = ReferenceKafka.start(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_VERSION, config=REFERENCE_CONFIG)
    print(f"Kafka {kafka.version} on {kafka.bootstrap_servers} (pid {kafka.pid}), ready in {kafka.startup_s:.1f} s; "
          "Ctrl-C or SIGTERM stops it", flush=True)
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        kafka.stop()
