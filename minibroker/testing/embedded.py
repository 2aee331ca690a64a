"""A broker on its own thread and event loop: for sync clients, unittest, scripts and the pytest plugin.

`Broker` runs on the caller's event loop, so a blocking client on the same thread
(confluent-kafka's `flush()`, kafka-python) starves it and times out. `BrokerThread`
gives the broker a thread and a uvloop loop of its own; any thread or event loop
can talk to it.

    with BrokerThread(config={"num.partitions": "3"}) as broker:
        producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap_servers})
        ...
    with ClusterThread(nodes=3, node_releases={3: "3.9"}) as cluster:
        ...

The core is not thread-safe: read `broker.cluster` freely, change it through
`broker.call(fn, ...)`, which runs `fn` on the broker's thread. `broker.control`
does that for every test-control operation.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .admin import TopicAdmin

if TYPE_CHECKING:
    from ..core.cluster import Cluster
    from ..server.broker import Broker
    from .control import Rule
    from .secure import Security

T = TypeVar("T")
CALL_TIMEOUT_S = 30.0


class ControlOnThread:
    """The in-process test control (minibroker/testing/control.py); each operation runs on the broker's thread."""

    def __init__(self, owner: BrokerThread) -> None:
        self._owner = owner

    def __getattr__(self, op: str) -> Callable[..., Any]:
        from .control import Control

        if op not in Control.OPERATIONS:
            raise AttributeError(op)
        method = getattr(self._owner.broker_control, op)

        def operation(*args: Any, **kwargs: Any) -> Any:
            return self._owner.call(method, *args, **kwargs)

        operation.__doc__ = method.__doc__
        return operation

    def __dir__(self) -> list[str]:
        from .control import Control

        return list(Control.OPERATIONS)


class BrokerThread:
    """A started-on-demand `Broker` (test control on) running on a daemon thread; a context manager.

    Keyword arguments are `Broker`'s (config, nodes, as_version, node_releases, clock, ...), and `faults`:
    test-control rules to start with (minibroker/testing/faults.py); the port defaults to 0, any free one.
    """

    def __init__(self, port: int = 0, faults: list[Rule] | None = None, **options: Any) -> None:
        from ..server.broker import Broker
        from .control import Control
        from .defaults import TEST_BROKER_CONFIG

        options["config"] = {**TEST_BROKER_CONFIG, **(options.get("config") or {})}
        # Built here, not on the thread, so a bad config raises ConfigError in the caller.
        self.broker: Broker = Broker(port=port, **options)
        self.broker_control = Control.attach(self.broker, faults)  # runs on the broker's thread: use .control
        self.security: Security | None = None  # BrokerThread.secured(): its CA, users and client settings (secure.py)
        self.control = ControlOnThread(self)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._admin: TopicAdmin | None = None

    @classmethod
    def secured(cls, directory: str | Path | None = None, config: Mapping[str, Any] | None = None,
                users: Mapping[str, str] | None = None, **options: Any) -> BrokerThread:
        """A started broker with PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL listeners, a throwaway CA and users;
        `.security` has the client settings (minibroker/testing/secure.py). `config` adds or overrides configs;
        `users` (name -> password) replaces the default users, the first being the super user `admin` is."""
        from .secure import new_security

        security = new_security(directory)
        if users is not None:
            security.users = dict(users)
        try:
            broker = cls(config={**security.broker_config(), **(config or {})}, **options).start()
        except BaseException:
            security.remove_files()
            raise
        broker.security = security  # before seed_users, so that stop() removes the files whatever happens
        try:
            security.seed_users(broker)
        except BaseException:
            broker.stop()
            raise
        return broker

    @property
    def bootstrap_servers(self) -> str:
        """Every node's advertised `host:port`, comma-separated: give it to any client."""
        return self.broker.bootstrap_servers

    @property
    def host(self) -> str:
        """The first node's advertised host."""
        return self.broker.cluster.nodes[0].host

    @property
    def port(self) -> int:
        """The first node's advertised port (the bound one once started, when 0 was asked for)."""
        return self.broker.cluster.nodes[0].port

    @property
    def cluster(self) -> Cluster:
        """The in-memory core shared by every node; change it only through `call`."""
        return self.broker.cluster

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, timeout: float = CALL_TIMEOUT_S) -> BrokerThread:
        """Bind every listener on a new thread; returns once clients can connect."""
        if self._thread is not None:
            raise RuntimeError("this broker was already started")
        started: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, args=(started,), name="minibroker", daemon=True)
        self._thread.start()
        try:
            started.result(timeout)
        except BaseException:
            self._thread.join(timeout)
            raise
        return self

    def _run(self, started: concurrent.futures.Future[None]) -> None:
        import uvloop

        loop = uvloop.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self.broker.start())
        except BaseException as exc:  # an address in use, say: the caller of start() raises it
            started.set_exception(exc)
            loop.close()
            return
        self._loop = loop
        started.set_result(None)
        try:
            loop.run_forever()
        finally:
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def call(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run `fn(*args, **kwargs)` on the broker's thread (awaited if it is a coroutine function); its result."""
        loop = self._loop
        if loop is None or not self.running:
            raise RuntimeError("the broker is not running")
        if inspect.iscoroutinefunction(fn):
            return asyncio.run_coroutine_threadsafe(fn(*args, **kwargs), loop).result(CALL_TIMEOUT_S)  # type: ignore[no-any-return]
        if threading.current_thread() is self._thread:
            return fn(*args, **kwargs)
        outcome: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                outcome.set_result(fn(*args, **kwargs))
            except BaseException as exc:
                outcome.set_exception(exc)

        loop.call_soon_threadsafe(run)
        return outcome.result(CALL_TIMEOUT_S)

    def create_topic(self, name: str, partitions: int = -1, config: Mapping[str, Any] | None = None,
                     replication_factor: int = -1) -> str:
        """Create a topic over the wire, as an Admin client would (TopicError on Kafka's refusal); its name."""
        self._topic_admin().create_topic(name, partitions, config, replication_factor)
        return name

    def delete_topic(self, name: str) -> None:
        """Delete a topic over the wire; one already gone is fine."""
        self._topic_admin().delete_topic(name)

    def _topic_admin(self) -> TopicAdmin:
        if self._admin is None:
            # a secured broker's fixtures log in as its super user, so ACLs never stand in their way
            self._admin = (TopicAdmin(self.bootstrap_servers) if self.security is None else
                           TopicAdmin(self.security.bootstrap("SASL_PLAINTEXT"), security=self.security.admin()))
        return self._admin

    def stop(self, timeout: float = CALL_TIMEOUT_S) -> None:
        """Close every listener and connection, end the thread, delete a secured broker's temporary keys; safe to
        call twice."""
        if self._admin is not None:
            self._admin.close()
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            asyncio.run_coroutine_threadsafe(self.broker.stop(), loop).result(timeout)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
        if self.security is not None:
            self.security.remove_files()

    def __enter__(self) -> BrokerThread:
        if self._thread is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<BrokerThread {self.bootstrap_servers} {'running' if self.running else 'stopped'}>"


class ClusterThread(BrokerThread):
    """A `BrokerThread` with several simulated nodes (3 unless `nodes` says otherwise)."""

    def __init__(self, nodes: int = 3, port: int = 0, **options: Any) -> None:
        super().__init__(port=port, nodes=nodes, **options)
