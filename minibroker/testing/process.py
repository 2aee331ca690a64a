"""Start and stop a real `minibroker serve` process on an ephemeral port.

`BrokerProcess` offers what `BrokerThread` offers (bootstrap_servers, control, create_topic,
delete_topic, stop), so a test does not care where its broker runs; only the in-process
`cluster` is missing. `restart()` starts a fresh broker on the same ports after a test killed it.

The process reads its standard input from a pipe this process holds (`serve --stop-on-stdin-close`):
however this process ends, SIGTERM or SIGKILL included, the pipe closes and the broker stops, so no
broker outlives the test run that started it. `stop()` also removes its log file.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..client.security import ClientSecurity
from ..core.config import load_properties
from .admin import TopicAdmin
from .control import ControlClient
from .defaults import TEST_BROKER_CONFIG

#: How long a broker process may take to answer its ready signal: a 2-core CI machine at load 14 took over 20 s
#: (Python's start, imports, binding); a broker that is ready sooner is used at once.
READY_TIMEOUT_S = 60.0


@dataclass
class BrokerProcess:
    """A broker subprocess; `stop()` ends it by its PID."""

    host: str
    port: int
    pid: int
    log_path: Path
    _popen: subprocess.Popen[bytes] = field(repr=False)
    control_port: int | None = None  # with extra_args ("--control-port", "0")
    servers: str = ""  # every node's advertised address, from the ready signal
    security: ClientSecurity | None = None  # how the fixtures (create_topic, delete_topic) log in
    nodes: list[dict[str, Any]] = field(default_factory=list, repr=False)  # the ready signal's
    _args: list[str] = field(default_factory=list, repr=False)  # the command line, for restart()
    _timeout: float = READY_TIMEOUT_S
    _log: str | None = field(default=None, repr=False)  # the log's text once stop() removed the file

    @functools.cached_property
    def control(self) -> ControlClient:
        """The broker's test control (start it with `--control-port 0`), closed by `stop()`."""
        if self.control_port is None:
            raise RuntimeError("the broker was started without --control-port")
        return ControlClient(self.host, self.control_port)

    @property
    def bootstrap_servers(self) -> str:
        """Every node's advertised `host:port`, comma-separated."""
        return self.servers or f"{self.host}:{self.port}"

    @property
    def cluster(self) -> Any:
        # AttributeError, so that hasattr(broker, "cluster") tells a thread from a process
        raise AttributeError("the broker runs in another process: there is no in-process cluster; use .control")

    @property
    def running(self) -> bool:
        return self.alive()

    @functools.cached_property
    def _admin(self) -> TopicAdmin:
        return TopicAdmin(self.bootstrap_servers, security=self.security)

    def create_topic(self, name: str, partitions: int = -1, config: Mapping[str, Any] | None = None,
                     replication_factor: int = -1) -> str:
        """Create a topic over the wire, as an Admin client would (TopicError on Kafka's refusal); its name."""
        self._admin.create_topic(name, partitions, config, replication_factor)
        return name

    def delete_topic(self, name: str) -> None:
        """Delete a topic over the wire; one already gone is fine."""
        self._admin.delete_topic(name)

    def log_text(self) -> str:
        """What the broker logged (stdout and stderr), also after stop()."""
        if self._log is not None:
            return self._log
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self._popen.poll() is None

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, then SIGKILL after `timeout`; removes the log file (log_text() keeps its text); the exit code."""
        self._close_clients()
        code = stop_process(self._popen, timeout)
        if self._log is None:
            self._log = self.log_text()
            self.log_path.unlink(missing_ok=True)
        return code

    def restart(self) -> BrokerProcess:
        """Stop the broker if it still runs, and start a fresh one (nothing kept) on the same ports when they are
        free again, else on new ones; this object then describes the new process."""
        self.stop()
        ports = [str(node["port"]) for node in self.nodes]
        pinned = [*self._args, "--ports", ",".join(ports)] if ports and not any(
            "listeners" in node for node in self.nodes) else self._args
        if self.control_port is not None:
            pinned = [*pinned, "--control-port", str(self.control_port)]
        try:
            fresh = _launch(pinned, self._timeout, self.security)
        except RuntimeError:  # a port was taken meanwhile
            fresh = _launch(self._args, self._timeout, self.security)
        for name in ("host", "port", "pid", "log_path", "_popen", "control_port", "servers", "nodes", "_log"):
            setattr(self, name, getattr(fresh, name))
        return self

    def _close_clients(self) -> None:
        for client in ("control", "_admin"):
            if client in self.__dict__:
                self.__dict__.pop(client).close()


def stop_process(popen: subprocess.Popen[Any], timeout: float = 10.0) -> int:
    """SIGTERM by PID, then SIGKILL after `timeout`; the exit code."""
    if popen.poll() is None:
        os.kill(popen.pid, signal.SIGTERM)
        try:
            popen.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(popen.pid, signal.SIGKILL)
            popen.wait(timeout)
    if popen.stdin is not None:
        popen.stdin.close()
    return int(popen.returncode)


def start_broker(*set_args: str, extra_args: tuple[str, ...] = (), timeout: float = READY_TIMEOUT_S,
                 security: ClientSecurity | None = None) -> BrokerProcess:
    """Run `python -m minibroker serve --port 0 --set k=v ...` and wait for its ready file; `security`
    (ClientSecurity.from_config of client settings) is how create_topic/delete_topic reach a secured first listener.
    TEST_BROKER_CONFIG applies unless `set_args` or a `--config` file of `extra_args` sets those configs."""
    args = ["--host", "127.0.0.1", "--port", "0", *extra_args]
    given = {item.partition("=")[0].strip() for item in set_args} | _config_file_keys(extra_args)
    for key, value in TEST_BROKER_CONFIG.items():
        if key not in given:
            args += ["--set", f"{key}={value}"]
    for item in set_args:
        args += ["--set", item]
    return _launch(args, timeout, security)


def _config_file_keys(extra_args: tuple[str, ...]) -> set[str]:
    """The configs a `--config FILE` (or `--config=FILE`) among `extra_args` sets."""
    keys: set[str] = set()
    for index, arg in enumerate(extra_args):
        path = extra_args[index + 1] if arg == "--config" and index + 1 < len(extra_args) else (
            arg.removeprefix("--config=") if arg.startswith("--config=") else None)
        if path is not None:
            with contextlib.suppress(OSError):
                keys |= set(load_properties(Path(path).read_text()))
    return keys


def _launch(args: list[str], timeout: float, security: ClientSecurity | None) -> BrokerProcess:
    log_file = tempfile.NamedTemporaryFile(prefix="minibroker-", suffix=".log", delete=False)
    path = Path(log_file.name)
    ready_path = path.with_suffix(".ready.json")
    command = [sys.executable, "-m", "minibroker", "serve", *args, "--ready-file", str(ready_path),
               "--stop-on-stdin-close"]
    # stdin: a pipe only this process writes to, closed by the kernel whenever this process ends
    with log_file:
        popen = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=log_file, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while popen.poll() is None and time.monotonic() < deadline:
        if ready_path.exists():  # written whole, then renamed into place
            ready = json.loads(ready_path.read_text())
            ready_path.unlink()
            first = ready["nodes"][0]
            return BrokerProcess(first["host"], first["port"], popen.pid, path, popen, ready["control_port"],
                                 ready["bootstrap_servers"], security, ready["nodes"], args, timeout)
        time.sleep(0.02)
    exited = popen.poll()
    stop_process(popen)
    log = path.read_text(errors="replace")
    path.unlink(missing_ok=True)
    if exited is not None:
        raise RuntimeError(f"broker exited with {exited}:\n{log}")
    raise RuntimeError(f"broker did not start within {timeout}s:\n{log}")
