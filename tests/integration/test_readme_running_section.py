"""The README's "Running the broker" section is true as written: every `$ ... minibroker serve ...` example it
shows, run as shown, refuses to start with exactly the line the README prints."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def section() -> str:
    text = README.read_text()
    return text[text.index("## Running the broker"):text.index("## Security")]


def examples() -> list[tuple[str, str]]:
    """(command line, what it prints) of each console example."""
    return re.findall(r"```\n\$ (.*?)\n(.*?)\n```", section(), re.S)


def test_the_section_shows_the_refusals_it_describes():
    shown = " ".join(command for command, _ in examples())
    assert "log.producer.state.batches.to.retain=3" in shown  # a value out of bounds
    assert "remote.log.storage.system.enable=true" in shown  # a config minibroker does not implement
    assert "MINIBROKER_PORT=ninety" in shown  # a bad variable


@pytest.mark.parametrize(("command", "printed"), examples(), ids=[command for command, _ in examples()])
def test_each_console_example_prints_what_the_readme_shows(command: str, printed: str):
    words = shlex.split(command)
    variables = {}
    while "=" in words[0]:  # NAME=value prefixes are the command's environment
        name, _, value = words.pop(0).partition("=")
        variables[name] = value
    assert words[:2] == ["minibroker", "serve"], command
    arguments = words[2:]
    if "MINIBROKER_PORT" not in variables and "--port" not in arguments:
        arguments += ["--port", "0"]  # should it start after all, never on 9092
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("MINIBROKER_")}, **variables}
    try:
        result = subprocess.run([sys.executable, "-m", "minibroker", "serve", *arguments], env=env,
                                capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{command}` started a broker instead of refusing")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == printed.strip()
