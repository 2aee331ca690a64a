"""The README's "Testing with minibroker" section is true as written: its examples run and pass, with the
pytest configuration it shows and nothing else."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

README = Path(__file__).resolve().parents[2] / "README.md"


def section() -> str:
    text = README.read_text()
    return text[text.index("## Testing with minibroker"):text.index("## What minibroker does not do")]


def section_examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", section(), re.S)


def test_the_sections_test_examples_pass_as_a_users_test_file(pytester: pytest.Pytester) -> None:
    tests = [block for block in section_examples() if "def test_" in block]
    assert len(tests) == 4
    # the project's configuration is the section's own pyproject.toml lines, so an async test that needs more
    # than the README says fails here
    (configuration,) = re.findall(r"```toml\n(.*?)```", section(), re.S)
    assert "asyncio_mode" in configuration and "pytest-asyncio" in section()
    pytester.makefile(".toml", pyproject=configuration)
    pytester.makepyfile(test_readme="\n\n".join(tests))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=180)
    result.assert_outcomes(passed=5)
    result.stdout.no_fnmatch_line("*warnings summary*")


def test_the_sections_script_example_runs(tmp_path: Path) -> None:
    (script,) = [block for block in section_examples() if "with BrokerThread" in block]
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.strip().split(",")) == 3
