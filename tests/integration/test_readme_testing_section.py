"""The README's "Testing with minibroker" section is true as written: its examples run and pass."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

README = Path(__file__).resolve().parents[2] / "README.md"


def section_examples() -> list[str]:
    text = README.read_text()
    section = text[text.index("## Testing with minibroker"):text.index("## What minibroker does not do")]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_sections_test_examples_pass_as_a_users_test_file(pytester: pytest.Pytester) -> None:
    tests = [block for block in section_examples() if "def test_" in block]
    assert len(tests) == 3
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_readme="\n\n".join(tests))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=180)
    result.assert_outcomes(passed=4)


def test_the_sections_script_example_runs(tmp_path: Path) -> None:
    (script,) = [block for block in section_examples() if "with BrokerThread" in block]
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.strip().split(",")) == 3
