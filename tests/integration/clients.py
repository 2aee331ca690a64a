"""Shared helpers for the non-Python client tests (Java client, KafkaJS, kcat).

A missing client dependency skips the test on a developer machine, but fails it when the CI
environment variable is set: in CI a skipped client test would hide a broken install step
(scripts/install-test-deps.sh installs everything these tests need).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
JAVA_SRC = ROOT / "tests" / "clients" / "java"
JAVA_CACHE = ROOT / ".cache" / "java"
NODE_DIR = ROOT / "tests" / "clients" / "node"
#: The current Java client set (kafka-clients and kafka-streams 4.3.x, tests/clients/java/pom.xml).
JAVA_CURRENT = "4.3"
#: The old Java client set (kafka-clients 3.9.1, tests/clients/java/3.9/pom.xml), for the old protocol profiles.
JAVA_OLD = "3.9"
#: The jars of each Java client set, each in .cache/java/<set>/<name>.jar.
JAVA_SETS = {
    JAVA_CURRENT: ("kafka-clients", "kafka-streams", "rocksdbjni", "jackson-databind", "jackson-core",
                   "jackson-annotations", "slf4j-api", "lz4-java", "snappy-java", "zstd-jni"),
    JAVA_OLD: ("kafka-clients", "slf4j-api", "lz4-java", "snappy-java", "zstd-jni"),
}
#: The programs that need the 4.x clients (Kafka Streams, 4.x-only Admin calls): tests/clients/java/v4, compiled
#: only with the current set.
JAVA_V4_SRC = JAVA_SRC / "v4"
#: The compiled test programs, one folder per client set and content hash of sources and jars: javac runs once
#: per change, not once per test module (it takes a minute on a loaded two-core machine).
JAVA_CLASSES = ROOT / ".cache" / "java-classes"
#: Class-data-sharing archives (JEP 350), one per main class and classpath: a JVM that maps the classes the same
#: program loaded last time spends about half the CPU starting (ProduceRecords: 4.6 s of user time, 2.5 s with
#: its archive), and JVM starts are most of what the Java tests cost on two cores.
JAVA_CDS = ROOT / ".cache" / "java-cds"
#: JVM log lines (a CDS archive the JVM cannot use, say) go to stderr, not among a program's JSON lines on stdout.
JVM_LOG_TO_STDERR = ("-Xlog:disable", "-Xlog:all=warning:stderr")
_ARCHIVE_AT_EXIT = "-XX:ArchiveClassesAtExit="
INSTALL_HINT = "run scripts/install-test-deps.sh"

#: Default bound on one client program run, in seconds.
CLIENT_TIMEOUT = 120.0


def in_ci() -> bool:
    """True when the CI environment variable is set to anything but an explicit false."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(what: str) -> NoReturn:
    """Skip the test because `what` is missing, or fail it under CI."""
    message = f"{what} is missing ({INSTALL_HINT})"
    if in_ci():
        pytest.fail(f"CI is set and {message}", pytrace=False)
    pytest.skip(message)


def require_binary(name: str) -> str:
    """The full path of executable `name`; skips/fails the test when it is not on PATH."""
    path = shutil.which(name)
    if path is None:
        missing(f"the {name!r} executable")
    return path


def java_lib(version: str = JAVA_CURRENT) -> Path:
    """The folder of Java client set `version` (.cache/java/<version>)."""
    return JAVA_CACHE / version


def java_classpath(version: str = JAVA_CURRENT) -> list[Path]:
    """The jars of Java client set `version` in .cache/java; needs java and javac on PATH."""
    require_binary("java")
    require_binary("javac")
    jars = []
    for name in JAVA_SETS[version]:
        jar = java_lib(version) / f"{name}.jar"
        if not jar.is_file():
            missing(str(jar))
        jars.append(jar)
    return jars


def node_dir() -> Path:
    """tests/clients/node with KafkaJS installed in it; needs node on PATH."""
    require_binary("node")
    if not (NODE_DIR / "node_modules" / "kafkajs" / "package.json").is_file():
        missing(f"KafkaJS in {NODE_DIR / 'node_modules'}")
    return NODE_DIR


@dataclass
class ClientRun:
    """The outcome of one client program run."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    broker: Any = None

    def lines(self) -> list[dict[str, Any]]:
        """The JSON objects the program printed, one per stdout line (other lines are ignored)."""
        out = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                out.append(json.loads(line))
        return out

    def describe(self, tail: int = 6000) -> str:
        """Command, exit code and the end of both output streams, for assertion messages."""
        text = (f"command: {' '.join(self.args)}\nexit code: {self.returncode}\n"
                f"--- stdout (end) ---\n{self.stdout[-tail:]}\n--- stderr (end) ---\n{self.stderr[-tail:]}")
        log_text = getattr(self.broker, "log_text", None)  # an in-process broker (a thread) has no log file
        if log_text is not None:
            text += f"\n--- broker log (end) ---\n{log_text()[-tail:]}"
        return text

    def check(self) -> ClientRun:
        """Asserts a zero exit code; returns self."""
        assert self.returncode == 0, self.describe()
        return self


def run_client(args: list[str], *, timeout: float = CLIENT_TIMEOUT, input: str | None = None,
               cwd: Path | None = None, env: dict[str, str] | None = None, broker: Any = None) -> ClientRun:
    """Runs a client program to completion; kills it and fails the test if it outlives `timeout`.

    `broker` (a conftest broker process) adds the end of its log to failure messages.
    """
    proc = subprocess.Popen(args, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                            env={**os.environ, **(env or {})})
    try:
        stdout, stderr = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        run = ClientRun(list(args), proc.returncode, stdout, stderr, broker)
        pytest.fail(f"client program did not finish within {timeout:.0f} s and was killed\n{run.describe()}",
                    pytrace=False)
    return ClientRun(list(args), proc.returncode, stdout, stderr, broker)


class JavaClients:
    """The test programs of tests/clients/java, compiled once into a temporary directory.

    `version` picks the client set: the current 4.3.x (default) or the old 3.9.1 (JAVA_OLD). The programs compile
    against both, but those of tests/clients/java/v4 (Kafka Streams, 4.x-only Admin calls) only against 4.3.
    """

    #: JVM options for short-lived programs: quick start-up, little memory.
    JVM_OPTS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx512m")

    def __init__(self, build_dir: Path, version: str = JAVA_CURRENT) -> None:
        jars = java_classpath(version)
        self.version = version
        sources = sorted(p for p in JAVA_SRC.rglob("*.java") if version == JAVA_CURRENT or JAVA_V4_SRC not in p.parents)
        lib_cp = os.pathsep.join(str(j) for j in jars)
        digest = hashlib.sha256(version.encode())
        for path in [*sources, *jars]:
            stat = path.stat()
            digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
            if path.suffix == ".java":
                digest.update(path.read_bytes())
        classes = JAVA_CLASSES / f"{version}-{digest.hexdigest()[:20]}"
        if not classes.is_dir():
            build = run_client(["javac", "-encoding", "UTF-8", "-cp", lib_cp, "-d", str(build_dir),
                                *(str(p) for p in sources)], timeout=300)
            assert build.returncode == 0, f"javac failed\n{build.describe()}"
            JAVA_CLASSES.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=JAVA_CLASSES))
            shutil.copytree(build_dir, staging, dirs_exist_ok=True)
            try:
                staging.rename(classes)  # atomic: a concurrent test worker may have put the same classes first
            except OSError:
                shutil.rmtree(staging, ignore_errors=True)
        # CDS archives only classes from jars: a classpath with a (non-empty) directory cannot be shared
        self.classpath = os.pathsep.join([str(_jar_of(classes)), lib_cp])
        self._runs = itertools.count()

    def command(self, main: str, *args: object) -> list[str]:
        """The command that runs class `main` with `args`, sharing the classes its last run loaded; pass it to
        `finished` once its JVM has exited, so that a first run's archive is kept."""
        digest = hashlib.sha256(f"{main}\0{self.classpath}".encode())
        for entry in self.classpath.split(os.pathsep):
            stat = Path(entry).stat()
            digest.update(f"{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
        archive = JAVA_CDS / f"{main}-{digest.hexdigest()[:20]}.jsa"
        if archive.is_file():
            sharing = f"-XX:SharedArchiveFile={archive}"
        else:  # the JVM writes the archive as it exits; `finished` moves it into place
            JAVA_CDS.mkdir(parents=True, exist_ok=True)
            sharing = f"{_ARCHIVE_AT_EXIT}{JAVA_CDS / f'.{archive.name}.{os.getpid()}.{next(self._runs)}'}"
        return ["java", *self.JVM_OPTS, *JVM_LOG_TO_STDERR, sharing, "-cp", self.classpath, main,
                *(str(a) for a in args)]

    @staticmethod
    def finished(command: list[str]) -> None:
        """After the JVM of `command` has exited: the archive it wrote, if any, takes its place (atomically: another
        worker may have put the same one there first)."""
        for arg in command:
            if arg.startswith(_ARCHIVE_AT_EXIT):
                staging = Path(arg[len(_ARCHIVE_AT_EXIT):])
                if staging.is_file():
                    os.replace(staging, staging.with_name(staging.name[1:].rsplit(".", 2)[0]))

    def run(self, broker: Any, main: str, *args: object, timeout: float = CLIENT_TIMEOUT) -> ClientRun:
        """Runs class `main` with the broker's bootstrap address followed by `args`."""
        command = self.command(main, broker.bootstrap_servers, *args)
        try:
            return run_client(command, timeout=timeout, broker=broker)
        finally:
            self.finished(command)

    def scenario(self, broker: Any, main: str, commands: tuple[str | list[str], ...],
                 timeout: float = CLIENT_TIMEOUT) -> list[dict[str, Any]]:
        """Runs a `;`-separated command program (AdminScenario, Kip1269Scenario); one result per command.

        A command is a string of space-separated words, or a list of words (for names with spaces).
        """
        words = [c.split() if isinstance(c, str) else list(c) for c in commands]
        args: list[str] = []
        for command in words:
            args += [*command, ";"]
        run = self.run(broker, main, *args, timeout=timeout).check()
        results = run.lines()
        assert [r["cmd"] for r in results] == [" ".join(c) for c in words], run.describe()
        for result in results:
            result["run"] = run
        return results


def _jar_of(classes: Path) -> Path:
    """`classes` packed as a jar beside it, once (atomically: a concurrent worker may pack the same)."""
    jar = classes.with_name(f"{classes.name}.jar")  # not with_suffix: "4.3-<digest>" would become "4.jar"
    if not jar.is_file():
        staging = jar.with_name(f".{jar.name}.{os.getpid()}")
        packed = run_client(["jar", "cf", str(staging), "-C", str(classes), "."], timeout=120)
        assert packed.returncode == 0, f"jar failed\n{packed.describe()}"
        os.replace(staging, jar)
    return jar


def ok(result: dict[str, Any]) -> dict[str, Any]:
    """Asserts a scenario command succeeded; returns its result."""
    assert result["ok"], f"{result['cmd']!r} failed: {result.get('error')}: {result.get('message')}\n" + \
        result["run"].describe()
    return result


def node_admin(node: Path, broker: Any, *commands: tuple[Any, ...]) -> list[dict[str, Any]]:
    """Runs tests/clients/node/admin.js with commands (op, arg, ...); one result per command, each with the `run`
    that gave it (for a failure's description)."""
    payload = [{"op": op, "args": list(args)} for op, *args in commands]
    run = run_client(["node", "admin.js", broker.bootstrap_servers, json.dumps(payload)], cwd=node,
                     broker=broker).check()
    results = run.lines()
    assert [r.get("op") for r in results] == [c[0] for c in commands], run.describe()
    for result in results:
        result["run"] = run
    return results


def node_ok(result: dict[str, Any]) -> Any:
    """Asserts an admin.js command (a `node_admin` result) succeeded; returns its result."""
    assert result["ok"], f"{result['op']} failed: {result.get('error')}: {result.get('message')} " \
        f"{result.get('errors', '')}\n{result['run'].describe()}"
    return result["result"]
