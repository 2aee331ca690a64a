# Two commands matter: `make serve` runs a broker (HOST=127.0.0.1 PORT=9092 by default), `make test` runs every test.
PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 9092
VENV := .venv
PY := $(VENV)/bin/python
SOURCES := pyproject.toml requirements/test-lock.txt setup.py minibroker/core/_validator_speedups.c
# the exact versions installed; pyproject.toml has the ranges
LOCK := requirements/test-lock.txt
# The checkout is installed as a path in a .pth file, not through setuptools' default import hook for a flat layout:
# the hook's module and what it imports (pathlib, fnmatch, urllib) cost every Python process about 40 ms at start,
# brokers, clients and CLI tools of the tests and benchmarks included; a user's wheel install pays neither.
EDITABLE := --config-settings editable_mode=compat
# make test's pytest-xdist workers: most tests wait on brokers, clients and JVMs; 3 workers loaded 2 cores enough to
# fail session-timeout and Spark worker timings in a full run, so 2 (a full run at 2 is still to be timed)
TEST_WORKERS ?= 2
# One venv, two stamps: the broker alone, and everything the tests need (the broker included).
SERVE_STAMP := $(VENV)/.installed-serve
TEST_STAMP := $(VENV)/.installed-test

.PHONY: serve test install test-deps lint bench bench-fixtures bench-rtt clean

$(PY):
	@echo "make: creating the virtualenv $(VENV)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(SERVE_STAMP): $(SOURCES) | $(PY)
	@echo "make: installing minibroker into $(VENV) (pip, pinned by $(LOCK))"
	$(PY) -m pip install --quiet -c $(LOCK) $(EDITABLE) -e .
	touch $@

$(TEST_STAMP): $(SOURCES) | $(PY)
	@echo "make: installing minibroker with its test and spark extras into $(VENV) (pip, pinned by $(LOCK); PySpark is about 1 GB, a few minutes)"
	$(PY) -m pip install --quiet -c $(LOCK) $(EDITABLE) -e '.[test,spark]'
	touch $@ $(SERVE_STAMP)

install: $(TEST_STAMP)

serve: $(SERVE_STAMP)
	$(VENV)/bin/minibroker serve --host $(HOST) --port $(PORT)

test-deps: $(TEST_STAMP)
	PYTHON=$(PY) bash scripts/install-test-deps.sh

test: test-deps
	@echo "make: ruff, mypy, then the whole suite on $(TEST_WORKERS) workers"
	$(PY) -m ruff check minibroker tests bench
	$(PY) -m mypy
	@# with PYTHONDONTWRITEBYTECODE set (as in this machine's environment) every broker, CLI and pytest subprocess compiled
	@# minibroker's 90 modules and rewrote the test modules again: about 1 s of CPU per Python process started
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n $(TEST_WORKERS)

lint: $(TEST_STAMP)
	$(PY) -m ruff check minibroker tests bench
	$(PY) -m mypy

# minibroker beside Apache Kafka 4.3.1 (test-deps installs it), franz-go's kfake (bench/kfake, built here from its
# go.mod and go.sum) and Tansu 0.6.0: bench/compare.py, the full run. minibroker's bytecode is compiled first, as
# pip compiles an installed wheel's, so that no broker start of the run pays for compiling it.
bench: test-deps
	$(PY) -m pip install --quiet -c $(LOCK) $(EDITABLE) -e '.[bench]'
	cd bench/kfake && GOFLAGS=-mod=readonly go build -o ../../.cache/kfake/kfake .
	$(PY) -m compileall -q minibroker
	$(PY) bench/compare.py

# The minibroker / Tansu throughput figures (bench/produce.py, bench/consume.py, bench/plot.py).
.PHONY: bench-tansu
bench-tansu: test-deps
	$(PY) -m pip install --quiet -c $(LOCK) $(EDITABLE) -e '.[bench]'
	$(PY) bench/produce.py
	$(PY) bench/consume.py
	$(PY) bench/plot.py

# Time to a ready broker (in process, and as a process against Tansu) and the pytest fixtures' per-test cost.
bench-fixtures: test-deps
	$(PY) bench/fixtures.py

# Records/s through three share consumers of one share group on one partition, minibroker beside Kafka 4.3.1
# (bench/share_groups.py, about 5 minutes).
.PHONY: bench-share
bench-share: test-deps
	$(PY) bench/share_groups.py

# The KIP-1269 experiment: RTT 0/20/100 ms x in-flight 1/5/10/20 through a latency proxy (about 3 minutes).
bench-rtt: $(SERVE_STAMP)
	$(PY) -m pip install --quiet -c $(LOCK) $(EDITABLE) -e '.[bench]'
	$(PY) bench/kip1269_rtt.py

# KIP-758 beside KIP-1269: producer-state memory, throughput at RTT 0/20/100 ms, exactly-once under faults and
# what each client reports for DUPLICATE_SEQUENCE_NUMBER (about 5 minutes; the Java, Python and KafkaJS clients).
.PHONY: bench-kip758
bench-kip758: test-deps
	$(PY) -m pip install --quiet -c $(LOCK) $(EDITABLE) -e '.[bench]'
	$(PY) bench/kip758_vs_kip1269.py

clean:
	rm -rf $(VENV) .cache build dist
