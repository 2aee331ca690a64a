"""pytest plugin `minibroker` (entry point pytest11): Kafka fixtures with no conftest.

- `kafka_broker` (session): one broker on its own thread and event loop, so sync clients
  (confluent-kafka, kafka-python) and async ones (aiokafka, any pytest-asyncio loop scope)
  both work; `.bootstrap_servers`, `.control`, `.cluster`, `.create_topic()`.
- `kafka_topic` (function): the name of a fresh topic on `kafka_broker`, deleted at teardown;
  `@pytest.mark.kafka_topic(partitions=3, config={"cleanup.policy": "compact"})`.
- `kafka_broker_factory` (function): `kafka_broker_factory(nodes=3, as_version="3.9", config={...})`
  starts a dedicated broker or cluster (a `BrokerThread`), stopped at teardown; `secure=True` gives it
  SSL, SASL_PLAINTEXT and SASL_SSL listeners too, with a throwaway CA and users (testing/secure.py).
- `kafka_secure_broker` (session): such a secure broker; `.security.librdkafka("SASL_SSL", "SCRAM-SHA-512")`,
  `.security.java(...)`, `.security.ca_path`.

Options for the session broker: `--minibroker-config KEY=VALUE` (repeatable), `--minibroker-as-version`,
`--minibroker-process` (a separate `minibroker serve` process, for tests that kill it: a test that finds it
dead gets a fresh one, restarted on the same ports); ini keys `minibroker_config` (one KEY=VALUE per line),
`minibroker_as_version`, `minibroker_process`. A bad value is one usage error at start, before any test.

This module is imported by every pytest run where minibroker is installed, so it imports
nothing of the broker until a fixture is used.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .embedded import BrokerThread
    from .process import BrokerProcess

# kafka-python 3.0 loads its JSON message definitions with importlib.resources' deprecated
# read_text at import; those 226 warnings are about kafka-python, not about the user's tests.
KAFKA_PYTHON_WARNINGS = (
    "ignore:read_text is deprecated:DeprecationWarning",
    "ignore:open_text is deprecated:DeprecationWarning",
)
_TOPIC_NAME_UNSAFE = re.compile(r"[^a-zA-Z0-9._-]+")
_topic_numbers = itertools.count(1)
_SESSION_PROCESS = pytest.StashKey["BrokerProcess"]()  # the session broker, when it runs as a process


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("minibroker", "minibroker Kafka fixtures")
    group.addoption("--minibroker-config", action="append", default=[], metavar="KEY=VALUE",
                    help="a broker config for the session broker `kafka_broker` (repeatable)")
    group.addoption("--minibroker-as-version", default=None, metavar="RELEASE",
                    help="the Kafka release the session broker speaks as (2.8, 3.9, 4.0 to 4.4, latest)")
    group.addoption("--minibroker-process", action="store_true", default=None,
                    help="run the session broker as a separate `minibroker serve` process instead of a thread")
    parser.addini("minibroker_config", "broker configs for `kafka_broker`, one KEY=VALUE per line", type="linelist")
    parser.addini("minibroker_as_version", "the Kafka release `kafka_broker` speaks as", default="latest")
    parser.addini("minibroker_process", "run `kafka_broker` as a separate process", type="bool", default=False)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser,
                                  args: list[str]) -> Iterator[None]:
    # before the user's conftest.py files, which may import kafka
    for line in KAFKA_PYTHON_WARNINGS:
        early_config.addinivalue_line("filterwarnings", line)
    return (yield)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "kafka_topic(partitions=1, config=None): partitions and topic configs "
                                       "of the `kafka_topic` fixture's topic")
    _check_session_options(config)


def _check_session_options(config: pytest.Config) -> None:
    """Refuse bad session broker options once, as a usage error, instead of failing every test that uses it."""
    configs = _session_configs(config)
    as_version = _session_as_version(config)
    if not configs and as_version == "latest":
        return  # nothing given: nothing to check, and nothing of the broker imported
    from ..apis.releases import release
    from ..core.config import ConfigError
    from ..server.broker import cluster_config

    try:
        release(as_version)
        cluster_config(configs, as_version)  # as the broker checks them before it binds anything
    except ValueError as exc:
        raise pytest.UsageError(f"minibroker: {exc}") from None
    except ConfigError as exc:
        raise pytest.UsageError(f"minibroker: {getattr(exc, 'message', None) or exc}") from None


def _session_as_version(config: pytest.Config) -> str:
    return str(config.getoption("minibroker_as_version") or config.getini("minibroker_as_version"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # A test killed the session broker process (what --minibroker-process is for): the next test gets a fresh
    # one on the same ports, so clients configured from bootstrap_servers before the kill still reach it.
    process = item.config.stash.get(_SESSION_PROCESS, None)
    if process is not None and not process.alive():
        process.restart()


def _session_configs(config: pytest.Config) -> dict[str, str]:
    """Broker configs from the ini file, then the command line (which wins)."""
    configs: dict[str, str] = {}
    for item in [*config.getini("minibroker_config"), *config.getoption("minibroker_config")]:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise pytest.UsageError(f"minibroker: expected KEY=VALUE for a broker config, got {item!r}")
        configs[key.strip()] = value.strip()
    return configs


@pytest.fixture(scope="session")
def kafka_broker(pytestconfig: pytest.Config) -> Iterator[BrokerThread | BrokerProcess]:
    """A broker shared by the whole session: a `BrokerThread`, or a `BrokerProcess` with --minibroker-process."""
    configs = _session_configs(pytestconfig)
    as_version = _session_as_version(pytestconfig)
    as_process = pytestconfig.getoption("minibroker_process")
    if as_process is None:
        as_process = pytestconfig.getini("minibroker_process")
    if as_process:
        from .process import start_broker

        process = start_broker(*(f"{k}={v}" for k, v in configs.items()),
                               extra_args=("--control-port", "0", "--as-version", as_version))
        pytestconfig.stash[_SESSION_PROCESS] = process
        try:
            yield process
        finally:
            del pytestconfig.stash[_SESSION_PROCESS]
            process.stop()
        return
    from .embedded import BrokerThread

    with BrokerThread(config=configs, as_version=as_version) as broker:
        yield broker


@pytest.fixture
def kafka_topic(request: pytest.FixtureRequest, kafka_broker: BrokerThread | BrokerProcess) -> Iterator[str]:
    """The name of a new topic on `kafka_broker`, deleted after the test."""
    marker = request.node.get_closest_marker("kafka_topic")
    options: dict[str, Any] = dict(marker.kwargs) if marker else {}
    partitions = options.pop("partitions", 1)
    topic_config = options.pop("config", None)
    if marker and (marker.args or options):
        raise pytest.UsageError(f"@pytest.mark.kafka_topic takes partitions= and config= only, got "
                                f"{marker.args or ''}{options or ''}")
    # Readable in broker logs and client errors, unique within the session, and a legal Kafka topic name.
    name = f"{_TOPIC_NAME_UNSAFE.sub('-', request.node.name)[:200]}-{next(_topic_numbers)}"
    kafka_broker.create_topic(name, partitions, topic_config)
    yield name
    try:
        kafka_broker.delete_topic(name)
    except OSError:
        # The test stopped or killed the broker: nothing left to delete. A killed process
        # resets its connections a moment before it is gone, hence the short wait.
        deadline = time.monotonic() + 5
        while kafka_broker.running and time.monotonic() < deadline:
            time.sleep(0.01)
        if kafka_broker.running:
            raise


@pytest.fixture
def kafka_broker_factory() -> Iterator[Callable[..., BrokerThread]]:
    """Start dedicated brokers: `kafka_broker_factory(nodes=3, as_version="3.9", node_releases={2: "4.0"},
    config={...})` takes `Broker`'s keyword arguments and returns a started `BrokerThread`; all stop after the test.
    """
    from .embedded import BrokerThread

    started: list[BrokerThread] = []

    def start(secure: bool = False, **options: Any) -> BrokerThread:
        if secure:
            broker = BrokerThread.secured(**options)
        else:
            broker = BrokerThread(**options).start()
        started.append(broker)
        return broker

    yield start
    for broker in reversed(started):
        broker.stop()


@pytest.fixture(scope="session")
def kafka_secure_broker() -> Iterator[BrokerThread]:
    """A session broker with PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL listeners, a throwaway CA and the users
    `admin`/`alice` for PLAIN and SCRAM; `.security` gives each client's settings (minibroker/testing/secure.py)."""
    from .embedded import BrokerThread

    broker = BrokerThread.secured()
    try:
        yield broker
    finally:
        broker.stop()
