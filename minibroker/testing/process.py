"""Start and stop a real `minibroker serve` process on an ephemeral port."""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .control import ControlClient

_READY = re.compile(r"minibroker listening on ([\d.]+):(\d+)")
_CONTROL = re.compile(r"minibroker control listening on ([\d.]+):(\d+)")


@dataclass
class BrokerProcess:
    """A broker subprocess; `stop()` ends it by its PID."""

    host: str
    port: int
    pid: int
    log_path: Path
    _popen: subprocess.Popen[bytes] = field(repr=False)
    control_port: int | None = None  # with extra_args ("--control-port", "0")

    @functools.cached_property
    def control(self) -> ControlClient:
        """The broker's test control (start it with `--control-port 0`), closed by `stop()`."""
        if self.control_port is None:
            raise RuntimeError("the broker was started without --control-port")
        return ControlClient(self.host, self.control_port)

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self._popen.poll() is None

    def stop(self, timeout: float = 10.0) -> int:
        """SIGTERM, then SIGKILL after `timeout`; returns the exit code."""
        if "control" in self.__dict__:
            self.control.close()
        if self._popen.poll() is None:
            os.kill(self.pid, signal.SIGTERM)
            try:
                self._popen.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(self.pid, signal.SIGKILL)
                self._popen.wait(timeout)
        return int(self._popen.returncode)


def start_broker(*set_args: str, extra_args: tuple[str, ...] = (), timeout: float = 20.0) -> BrokerProcess:
    """Run `python -m minibroker serve --port 0 --set k=v ...` and wait until it listens."""
    log_file = tempfile.NamedTemporaryFile(prefix="minibroker-", suffix=".log", delete=False)
    args = [sys.executable, "-m", "minibroker", "serve", "--host", "127.0.0.1", "--port", "0", *extra_args]
    for item in set_args:
        args += ["--set", item]
    popen = subprocess.Popen(args, stdout=log_file, stderr=subprocess.STDOUT)
    path = Path(log_file.name)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = path.read_text(errors="replace")
        match = _READY.search(text)
        control = _CONTROL.search(text)
        if match and (control or "--control-port" not in extra_args):
            return BrokerProcess(match.group(1), int(match.group(2)), popen.pid, path, popen,
                                 int(control.group(2)) if control else None)
        if popen.poll() is not None:
            raise RuntimeError(f"broker exited with {popen.returncode}:\n{path.read_text(errors='replace')}")
        time.sleep(0.05)
    popen.kill()
    popen.wait()
    raise RuntimeError(f"broker did not start within {timeout}s:\n{path.read_text(errors='replace')}")
