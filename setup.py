"""Builds the record walk's C fast lane; everything else about the package is in pyproject.toml.

`optional=True`: without a C compiler the install still succeeds and the validator runs its
pure-Python lane (tests/unit/test_log_validator.py checks the compiled one is present where we test).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("minibroker.core._validator_speedups", ["minibroker/core/_validator_speedups.c"],
                             optional=True)])
