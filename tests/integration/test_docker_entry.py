"""The container's entry point without a Docker engine: docker/Dockerfile's runtime stage read as text, its CMD run
with its ENV (bound to 127.0.0.1 here), its HEALTHCHECK run against that, and the advertised address it relies on."""

from __future__ import annotations

import fnmatch
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from minibroker import cli
from minibroker.server.broker import Broker, advertised_host_for
from tests.helpers import free_port
from tests.integration.test_cli import clean_env, start_serve

ROOT = Path(__file__).resolve().parents[2]


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    result: list[tuple[str, str]] = []
    pending = ""
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not stripped or (stripped.startswith("#") and not pending):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        keyword, _, arguments = (pending + stripped).partition(" ")
        result.append((keyword.upper(), arguments.strip()))
        pending = ""
    return result


def runtime_stage() -> list[tuple[str, str]]:
    """The instructions of the last stage: the image that runs."""
    parsed = instructions(ROOT / "docker" / "Dockerfile")
    last_from = max(i for i, (keyword, _) in enumerate(parsed) if keyword == "FROM")
    return parsed[last_from:]


def one(stage: list[tuple[str, str]], keyword: str) -> str:
    found = [arguments for kw, arguments in stage if kw == keyword]
    assert len(found) == 1, (keyword, found)
    return found[0]


def env_of(stage: list[tuple[str, str]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for keyword, arguments in stage:
        if keyword == "ENV":
            for item in shlex.split(arguments):
                name, sep, value = item.partition("=")
                assert sep, f"ENV {arguments}: use NAME=VALUE"
                env[name] = value
    return env


def exec_form(arguments: str) -> list[str]:
    argv = json.loads(arguments)
    assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
    return argv


def as_python(argv: list[str]) -> list[str]:
    """The image's `minibroker` command is this interpreter's `-m minibroker`."""
    assert argv[0] == "minibroker"
    return [sys.executable, "-m", "minibroker", *argv[1:]]


def test_runtime_stage_is_python_311_slim_non_root_with_broker_environment():
    stage = runtime_stage()
    assert one(stage, "FROM").split()[0] == "python:3.11-slim"
    user = one(stage, "USER").split(":")[0]
    assert user not in ("root", "0", "")
    env = env_of(stage)
    assert env["MINIBROKER_HOST"] == "0.0.0.0"
    assert env["MINIBROKER_PORT"] == "9092"
    assert one(stage, "EXPOSE").split() == ["9092"]
    assert exec_form(one(stage, "CMD")) == ["minibroker", "serve"]


def test_healthcheck_runs_minibroker_check():
    healthcheck = one(runtime_stage(), "HEALTHCHECK")
    _options, _, command = healthcheck.partition("CMD ")
    assert exec_form(command)[:2] == ["minibroker", "check"]


def test_build_copies_what_the_package_build_needs():
    copied = " ".join(arguments for keyword, arguments in instructions(ROOT / "docker" / "Dockerfile")
                      if keyword == "COPY" and "--from" not in arguments)
    for needed in ("pyproject.toml", "setup.py", "README.md", "minibroker", "schemas"):
        assert needed in copied.split() or f"{needed}/" in copied, needed
    assert (ROOT / "minibroker" / "core" / "_validator_speedups.c").exists()


def dockerignore() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def ignored(path: str, patterns: list[str]) -> bool:
    """Roughly Docker's rule: a pattern matches the path or one of its parent folders; the last match wins."""
    verdict = False
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for pattern in patterns:
        negate = pattern.startswith("!")
        body = pattern.lstrip("!").strip("/")
        if any(fnmatch.fnmatch(c, body) or (body.startswith("**/") and fnmatch.fnmatch(c.split("/")[-1], body[3:]))
               for c in candidates):
            verdict = not negate
    return verdict


def test_dockerignore_keeps_out_local_state_but_not_the_sources():
    patterns = dockerignore()
    for local in (".venv/bin/python", ".git/HEAD", ".cache/x", "tests/clients/node/node_modules/kafkajs/index.js",
                  "build/lib/x.py", "dist/minibroker.whl", "minibroker.egg-info/PKG-INFO", "bench/results/a.json",
                  "minibroker/__pycache__/cli.cpython-311.pyc"):
        assert ignored(local, patterns), local
    for source in ("pyproject.toml", "setup.py", "README.md", "minibroker/cli.py",
                   "minibroker/core/_validator_speedups.c", "schemas/ProduceRequest.json"):
        assert not ignored(source, patterns), source


def test_cmd_with_the_image_environment_becomes_ready_and_healthy():
    stage = runtime_stage()
    command = exec_form(one(stage, "CMD"))
    # tests bind 127.0.0.1 only: the address must come from the environment we override here
    assert not {"--host", "--port", "--ports"} & set(command), command
    env = clean_env(**{**env_of(stage), "MINIBROKER_HOST": "127.0.0.1", "MINIBROKER_PORT": "0"})
    process = start_serve(command=as_python(command), env=env)
    try:
        node = process.ready["nodes"][0]
        assert node["host"] == node["advertised_host"] == "127.0.0.1"
        _options, _, healthcheck = one(stage, "HEALTHCHECK").partition("CMD ")
        # inside the image MINIBROKER_PORT is the port the broker listens on; here that is the ephemeral one
        result = subprocess.run(as_python(exec_form(healthcheck)), capture_output=True, text=True, timeout=30,
                                env={**env, "MINIBROKER_PORT": str(node["port"])})
        assert result.returncode == 0, result.stderr
    finally:
        assert process.stop() == 0


# -- the address a wildcard listener advertises ------------------------------------------------------------


@pytest.mark.parametrize(("bind_host", "advertised", "expected"), [
    ("0.0.0.0", None, "localhost"),
    ("::", None, "localhost"),
    ("", None, "localhost"),
    ("127.0.0.1", None, "127.0.0.1"),
    ("10.1.2.3", None, "10.1.2.3"),
    ("0.0.0.0", "broker", "broker"),
    ("127.0.0.1", "broker", "broker"),
])
def test_advertised_host_for(bind_host, advertised, expected):
    assert advertised_host_for(bind_host, advertised) == expected


def test_a_wildcard_broker_advertises_localhost_unless_told():
    assert Broker(host="0.0.0.0", port=0).bootstrap_servers == "localhost:0"
    assert Broker(host="0.0.0.0", port=0, advertised_host="broker").bootstrap_servers == "broker:0"
    assert Broker(host="0.0.0.0", port=0, advertised_host="broker",
                  advertised_listeners=[("proxy", 19092)]).bootstrap_servers == "proxy:19092"
    assert Broker(host="0.0.0.0", port=9092, nodes=2).bootstrap_servers == "localhost:9092,localhost:9093"


def broker_from_command_line(*argv: str) -> Broker:
    args = cli.parse_args(["serve", *argv])
    return cli.make_broker(args, {})


def test_environment_chooses_the_advertised_host(monkeypatch):
    for name in ("MINIBROKER_HOST", "MINIBROKER_PORT", "MINIBROKER_ADVERTISED_HOST", "MINIBROKER_ADVERTISED_LISTENERS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MINIBROKER_HOST", "0.0.0.0")
    monkeypatch.setenv("MINIBROKER_PORT", "9092")
    assert broker_from_command_line().bootstrap_servers == "localhost:9092"
    monkeypatch.setenv("MINIBROKER_ADVERTISED_HOST", "broker")
    assert broker_from_command_line().bootstrap_servers == "broker:9092"
    assert broker_from_command_line("--advertised-host", "flag").bootstrap_servers == "flag:9092"
    assert broker_from_command_line("--advertised-listeners", "proxy:1").bootstrap_servers == "proxy:1"
    monkeypatch.setenv("MINIBROKER_ADVERTISED_LISTENERS", "proxy:2")
    assert broker_from_command_line().bootstrap_servers == "proxy:2"


def test_healthcheck_follows_a_port_given_on_the_command_line(tmp_path):
    """`docker run minibroker minibroker serve --port 19092`: healthy, although MINIBROKER_PORT still says 9092."""
    stage = runtime_stage()
    env = env_of(stage)
    assert env["MINIBROKER_READY_FILE"].startswith("/tmp/")  # writable by the image's user
    # here the port variable names a port nothing listens on, and the ready file is the test's own
    env = clean_env(**{**env, "MINIBROKER_HOST": "127.0.0.1", "MINIBROKER_PORT": str(free_port()),
                       "MINIBROKER_READY_FILE": str(tmp_path / "ready.json")})
    process = start_serve(command=as_python([*exec_form(one(stage, "CMD")), "--port", "0"]), env=env)
    try:
        _options, _, healthcheck = one(stage, "HEALTHCHECK").partition("CMD ")
        result = subprocess.run(as_python(exec_form(healthcheck)), capture_output=True, text=True, timeout=30,
                                env=env)
        assert result.returncode == 0, result.stderr
    finally:
        assert process.stop() == 0


def test_the_image_installs_the_locked_versions():
    build = instructions(ROOT / "docker" / "Dockerfile")
    copied = " ".join(arguments for keyword, arguments in build if keyword == "COPY")
    assert "requirements/test-lock.txt" in copied
    (wheel,) = [arguments for keyword, arguments in build if keyword == "RUN" and "pip wheel" in arguments]
    assert "--constraint requirements/test-lock.txt" in wheel
