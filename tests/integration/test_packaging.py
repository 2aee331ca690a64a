"""minibroker as a real package: a wheel built from the repository and installed in a fresh virtualenv outside it
runs a user's pytest project on the plugin's fixtures (no conftest.py) with confluent-kafka, kafka-python and
aiokafka, without kafka-python's DeprecationWarnings; and from a checkout's root, where Python imports the
source tree instead of the wheel, the broker still finds its message definitions."""

from __future__ import annotations

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

pytestmark = pytest.mark.timeout(900)  # a wheel build, a virtualenv and pip installs, once per module

REPO = Path(__file__).resolve().parents[2]
USER_PROJECT = Path(__file__).resolve().parent / "user_project"
#: what a user installs beside the wheel, at the versions pyproject.toml pins
CLIENTS = ("pytest", "pytest-asyncio", "confluent-kafka", "kafka-python", "aiokafka")
KAFKA_DEPRECATIONS = ("read_text is deprecated", "open_text is deprecated")


def pinned(names: tuple[str, ...]) -> list[str]:
    """The `name==version` requirements pyproject.toml gives for `names`, in its dependencies or any extra."""
    with open(REPO / "pyproject.toml", "rb") as file:
        project = tomllib.load(file)["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements.extend(extra)
    by_name = {re.split(r"[\s=<>!~;\[]", requirement, maxsplit=1)[0].lower(): requirement
               for requirement in requirements}
    found = [by_name[name] for name in names]
    assert all("==" in requirement for requirement in found), found
    return found


def clean_env() -> dict[str, str]:
    """This environment without what would make a subprocess import or configure something else."""
    dropped = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "MINIBROKER_", "PYTEST_")
    env = {key: value for key, value in os.environ.items() if not key.startswith(dropped)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # runs from the repository root must not write into it
    return env


def run(command: list[str | Path], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run `command`; fail the test with its output when it fails."""
    result = subprocess.run([str(part) for part in command], cwd=cwd, env=clean_env(), capture_output=True,
                            text=True, timeout=timeout)
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
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("packaging")
    # Build from a copy: a build in the repository writes build/ there, and a stale build/ can carry files that
    # no longer exist into the wheel.
    source = root / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".cache", "build", "dist", "*.egg-info", "node_modules", "__pycache__", "*.so",
        ".pytest_cache", ".mypy_cache", ".ruff_cache"))
    run([sys.executable, "-m", "pip", "wheel", source, "--no-deps", "--wheel-dir", root / "dist"], cwd=root)
    wheel, = (root / "dist").glob("minibroker-*.whl")
    venv = root / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=root)
    run([venv / "bin" / "python", "-m", "pip", "install", wheel, *pinned(CLIENTS)], cwd=root)
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
