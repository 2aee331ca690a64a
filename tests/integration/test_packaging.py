"""minibroker as a real package: a wheel built from the repository and installed in a fresh virtualenv outside it
runs a user's pytest project on the plugin's fixtures (no conftest.py) with confluent-kafka, kafka-python and
aiokafka, without kafka-python's DeprecationWarnings; and from a checkout's root, where Python imports the
source tree instead of the wheel, the broker still finds its message definitions.

Its runtime dependencies are ranges: the lowest allowed version of each, installed from the package index, runs
a produce/consume round trip; a project pinning kafka-python 2.x gets pip's resolution error naming both
requirements, and reaches a broker in another environment with its own kafka-python 2.x."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from minibroker.testing.process import start_broker

pytestmark = pytest.mark.timeout(900)  # a wheel build, a virtualenv and pip installs, once per module

REPO = Path(__file__).resolve().parents[2]
USER_PROJECT = Path(__file__).resolve().parent / "user_project"
LOCK = REPO / "requirements" / "test-lock.txt"
#: what a user installs beside the wheel, at the versions the test environment's lock pins
CLIENTS = ("pytest", "pytest-asyncio", "confluent-kafka", "kafka-python", "aiokafka")
KAFKA_DEPRECATIONS = ("read_text is deprecated", "open_text is deprecated")


def locked() -> dict[str, Version]:
    """The test environment's lock: each package's exact version, by canonical name."""
    pins: dict[str, Version] = {}
    for line in LOCK.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            (specifier,) = requirement.specifier
            assert specifier.operator == "==", line
            pins[canonicalize_name(requirement.name)] = Version(specifier.version)
    return pins


def pinned(names: tuple[str, ...]) -> list[str]:
    """`name==version` for `names`, at the versions the lock pins."""
    pins = locked()
    return [f"{name}=={pins[canonicalize_name(name)]}" for name in names]


def runtime_requirements() -> list[Requirement]:
    with open(REPO / "pyproject.toml", "rb") as file:
        return [Requirement(text) for text in tomllib.load(file)["project"]["dependencies"]]


def lower_bound(requirement: Requirement) -> Version:
    """The version a range starts at (its `>=`)."""
    (bound,) = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
    return bound


def clean_env() -> dict[str, str]:
    """This environment without what would make a subprocess import or configure something else."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "MINIBROKER_", "PYTEST_")
    env = {key: value for key, value in os.environ.items() if not key.startswith(dropped)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # runs from the repository root must not write into it
    return env


def run(command: list[str | Path], cwd: Path, timeout: float = 600,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `command`; fail the test with its output when it fails."""
    result = subprocess.run([str(part) for part in command], cwd=cwd, env=clean_env() if env is None else env,
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{command} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


@dataclass
class Installed:
    """The wheel and the virtualenv it is installed in."""

    wheel: Path
    venv: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheel")
    # Build from a copy: a build in the repository writes build/ there, and a stale build/ can carry files that
    # no longer exist into the wheel.
    source = root / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".cache", "build", "dist", "*.egg-info", "node_modules", "__pycache__", "*.so",
        ".pytest_cache", ".mypy_cache", ".ruff_cache"))
    run([sys.executable, "-m", "pip", "wheel", source, "--no-deps", "--wheel-dir", root / "dist"], cwd=root)
    built, = (root / "dist").glob("minibroker-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Installed:
    root = tmp_path_factory.mktemp("packaging")
    venv = root / "venv"
    # no pip of its own: this interpreter's pip installs into it, which saves installing pip (seconds)
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=root)
    # the highest tested versions, as the lock pins them (the lowest: test_the_lowest_allowed_...)
    run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--quiet", "--constraint", LOCK,
         wheel, *pinned(CLIENTS)], cwd=root)
    return Installed(wheel, venv)


def test_the_wheel_holds_the_schemas_the_plugin_and_the_compiled_fast_lane(installed: Installed):
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        entry_points, = (name for name in names if name.endswith(".dist-info/entry_points.txt"))
        entry_points_text = wheel.read(entry_points).decode()
    for definition in sorted((REPO / "schemas").glob("*.json")):
        assert f"minibroker/schemas/{definition.name}" in names
    assert "minibroker/testing/pytest_plugin.py" in names
    assert re.search(r"\[pytest11\]\s*minibroker = minibroker.testing.pytest_plugin", entry_points_text)
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler):  # setup.py builds it where there is a compiler
        assert any(re.fullmatch(r"minibroker/core/_validator_speedups\..*\.so", name) for name in names), names


def test_the_installed_package_is_the_one_imported_outside_the_repository(installed: Installed, tmp_path: Path):
    result = run([installed.python, "-W", "error::DeprecationWarning", "-c",
                  "import minibroker.protocol.messages, minibroker.schemas; print(minibroker.schemas.__file__)"],
                 cwd=tmp_path)
    assert Path(result.stdout.strip()).is_relative_to(installed.venv)


@pytest.mark.parametrize("module", ["minibroker.protocol.messages", "minibroker.testing.embedded",
                                    "minibroker.testing.process", "minibroker.testing.control",
                                    "minibroker.testing.pytest_plugin", "minibroker.cli"])
def test_importing_minibroker_shows_no_deprecation_warning(installed: Installed, tmp_path: Path, module: str):
    """kafka-python's own (read_text/open_text at import) included: each module alone, in a fresh interpreter."""
    run([installed.python, "-W", "error::DeprecationWarning", "-c", f"import {module}"], cwd=tmp_path)


def test_a_user_project_runs_on_the_plugin_fixtures(installed: Installed, tmp_path: Path):
    project = tmp_path / "project"
    shutil.copytree(USER_PROJECT, project, ignore=shutil.ignore_patterns("__pycache__"))
    assert not list(project.rglob("conftest.py"))
    result = subprocess.run([installed.venv / "bin" / "pytest", "-v"], cwd=project, env=clean_env(),
                            capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    tests = sum(len(re.findall(r"^(?:async )?def test_", path.read_text(), re.MULTILINE))
                for path in project.glob("test_*.py"))
    assert re.search(rf"\b{tests} passed\b", output), output
    for message in KAFKA_DEPRECATIONS:
        assert message not in output, output
    assert "warnings summary" not in output, output  # none at all: the user sees only their own


def test_the_repository_root_imports_the_source_tree_with_its_schemas(installed: Installed):
    result = run([installed.python, "-W", "error::DeprecationWarning", "-c",
                  "import minibroker.protocol.messages, minibroker.schemas; print(minibroker.schemas.__file__)"],
                 cwd=REPO)
    assert Path(result.stdout.strip()) == REPO / "schemas" / "__init__.py"


def test_serve_starts_from_the_repository_root(installed: Installed, tmp_path: Path):
    with open(tmp_path / "stderr", "wb") as stderr:
        process = subprocess.Popen([installed.python, "-m", "minibroker", "serve", "--host", "127.0.0.1",
                                    "--port", "0"], cwd=REPO, env=clean_env(), stdout=subprocess.DEVNULL,
                                   stderr=stderr)
    try:
        deadline = time.monotonic() + 30
        log = ""
        while "listening" not in log and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            log = (tmp_path / "stderr").read_text(errors="replace")
        assert "minibroker listening on 127.0.0.1:" in log, log
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(10)


# -- the dependency ranges, tested at both ends ------------------------------------------------------------------


def test_runtime_dependencies_are_ranges_from_a_tested_lower_bound_to_the_locked_version():
    pins = locked()
    for requirement in runtime_requirements():
        assert not any(s.operator in ("==", "===") for s in requirement.specifier), requirement
        top = pins[canonicalize_name(requirement.name)]
        assert lower_bound(requirement) <= top and requirement.specifier.contains(top), (requirement, top)


# Every runtime dependency at work: kafka-python's engine (the codec) and client, gzip, lz4 (lz4) and zstd
# (zstandard) batches from kafka-python, snappy (cramjam) from minibroker's producer, CRC32C on each, TLS (uvloop)
# with a throwaway CA (cryptography), an RE2 regex.
LOWEST_ROUND_TRIP = """
import asyncio, json, time
from importlib.metadata import version
from kafka import KafkaConsumer, KafkaProducer
from minibroker.client import Producer
from minibroker.core.consumer_groups import compile_regex
from minibroker.testing import BrokerThread

async def send_snappy(servers):
    # kafka-python reads snappy only with python-snappy, which minibroker does not need: its offset says enough
    async with Producer(servers, compression="snappy") as producer:
        return (await (await producer.send("lowest-snappy", b"snappy"))).offset

with BrokerThread.secured() as broker:
    tls = {"bootstrap_servers": broker.security.bootstrap("SSL"), "security_protocol": "SSL",
           "ssl_cafile": str(broker.security.ca_path)}
    for codec in ("gzip", "lz4", "zstd"):
        producer = KafkaProducer(compression_type=codec, **tls)
        producer.send("lowest", codec.encode()).get(timeout=30)
        producer.close()
    snappy_offset = asyncio.run(send_snappy(broker.bootstrap_servers))
    consumer = KafkaConsumer("lowest", auto_offset_reset="earliest", **tls)
    values = []
    deadline = time.monotonic() + 30
    while len(values) < 3 and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            values.extend(record.value.decode() for record in records)
    consumer.close()
assert compile_regex("low.*").fullmatch("lowest")
names = ("kafka-python", "uvloop", "fastcrc", "cramjam", "lz4", "zstandard", "cryptography", "google-re2")
print(json.dumps({"values": values, "snappy_offset": snappy_offset,
                  "versions": {name: version(name) for name in names}}))
"""


def test_the_lowest_allowed_dependency_versions_run_a_round_trip(wheel: Path, tmp_path: Path):
    lowest = {canonicalize_name(r.name): lower_bound(r) for r in runtime_requirements()}
    constraints = tmp_path / "lowest.txt"
    constraints.write_text("".join(f"{name}=={low}\n" for name, low in lowest.items()))
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--quiet",
         "--constraint", constraints, wheel], cwd=tmp_path)
    result = run([venv / "bin" / "python", "-c", LOWEST_ROUND_TRIP], cwd=tmp_path, timeout=120)
    outcome = json.loads(result.stdout.splitlines()[-1])
    assert outcome["values"] == ["gzip", "lz4", "zstd"]
    assert outcome["snappy_offset"] == 0
    assert {canonicalize_name(n): Version(v) for n, v in outcome["versions"].items()} == lowest


def dry_run_install(wheel: Path, *requirements: str) -> subprocess.CompletedProcess[str]:
    """What pip resolves for a project that installs the wheel beside `requirements` (nothing is installed)."""
    return subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", wheel,
                           *requirements], env=clean_env(), capture_output=True, text=True, timeout=300)


def test_a_project_on_an_older_kafka_python_3_resolves(wheel: Path):
    low = str(lower_bound(next(r for r in runtime_requirements() if r.name == "kafka-python")))
    result = dry_run_install(wheel, f"kafka-python=={low}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"kafka-python-{low}" in result.stdout


def test_a_project_pinning_kafka_python_2_gets_a_resolution_error_naming_both_requirements(wheel: Path):
    result = dry_run_install(wheel, "kafka-python==2.3.0")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "ResolutionImpossible" in output, output
    assert "The user requested kafka-python==2.3.0" in output, output
    low = lower_bound(next(r for r in runtime_requirements() if r.name == "kafka-python"))
    assert re.search(rf"minibroker \S+ depends on kafka-python\S*( and )?>={re.escape(str(low))}", output), output


def test_kafka_python_2_in_its_own_environment_reaches_a_broker_process(tmp_path: Path):
    """What the README tells such a project to do: run the broker from its own environment."""
    target = tmp_path / "kafka-python-2"
    run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", target, "kafka-python==2.3.0"],
        cwd=tmp_path)
    broker = start_broker()
    try:
        script = (
            "import kafka\n"
            "from kafka import KafkaConsumer, KafkaProducer\n"
            f"servers = {broker.bootstrap_servers!r}\n"
            "producer = KafkaProducer(bootstrap_servers=servers)\n"
            "offset = producer.send('legacy', b'from 2.x').get(timeout=30).offset\n"
            "producer.close()\n"
            "consumer = KafkaConsumer('legacy', bootstrap_servers=servers, auto_offset_reset='earliest',\n"
            "                         consumer_timeout_ms=20000)\n"
            "print(kafka.__version__, offset, next(iter(consumer)).value.decode())\n"
            "consumer.close()\n")
        result = run([sys.executable, "-c", script], cwd=tmp_path, timeout=120,
                     env={**clean_env(), "PYTHONPATH": str(target)})
    finally:
        broker.stop()
    assert result.stdout.split() == ["2.3.0", "0", "from", "2.x"]
