# Two commands matter: `make serve` runs a broker on 127.0.0.1:9092, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: serve test install test-deps lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
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

clean:
	rm -rf $(VENV) .cache
