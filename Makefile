# Two commands matter: `make serve` runs a broker on 127.0.0.1:9092, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: serve test install test-deps lint bench bench-rtt clean

$(STAMP): pyproject.toml setup.py minibroker/core/_validator_speedups.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,spark]'
	touch $(STAMP)

install: $(STAMP)

serve: $(STAMP)
	$(VENV)/bin/minibroker serve --host 127.0.0.1 --port 9092

test-deps: $(STAMP)
	PYTHON=$(PY) bash scripts/install-test-deps.sh

test: test-deps
	$(PY) -m ruff check minibroker tests bench
	$(PY) -m mypy
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check minibroker tests bench
	$(PY) -m mypy

bench: test-deps
	$(PY) bench/produce.py

# The KIP-1269 experiment: RTT 0/20/100 ms x in-flight 1/5/10/20 through a latency proxy (about 3 minutes).
bench-rtt: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) bench/kip1269_rtt.py

clean:
	rm -rf $(VENV) .cache
