"""Test control of a running broker: hold, delay, drop and fail requests, move leaders, count in-flight Produce.

`Control` is the in-process surface (`control = Control.attach(broker)`); it registers on the
server's request hook (`Broker.request_hook`, see server/connection.py). The same operations
reach a broker in another process through a line-based JSON listener
(`minibroker serve --control-port 0`) and `ControlClient`:

    control = ControlClient("127.0.0.1", port)
    control.hold("events", 0)          # Produce answers for events-0 wait ...
    control.in_flight("events", 0)     # {"current": 7, "max": 7}: requests received, not answered
    control.release("events", 0)       # ... until released, in order
    control.inject_error("produce", error_code=6, count=3, topic="events")  # NOT_LEADER_OR_FOLLOWER x3
    control.move_leader("events", 0, node=2)

Broker-side in-flight counting: a Produce request is outstanding for each
partition it carries from the moment its bytes arrive until its response is
written (or its connection closes), so requests waiting behind a held or
delayed answer on the same connection count too, as they do for the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..apis import API_MODULE_NAMES, API_MODULES, produce
from ..apis.dispatch import Adjust, decode_frame
from ..protocol.errors import ErrorCode
from ..protocol.messages import RESPONSES
from ..server.connection import LATER, SEND, AnswerVerdict, DropConnection

if TYPE_CHECKING:
    from ..core.cluster import Cluster
    from ..server.broker import Broker

log = logging.getLogger("minibroker.control")

PRODUCE = 0
# by the handler modules' names, read without importing them (importing all 59 took 150 ms of every test process)
API_KEYS: dict[str, int] = {name: key for key, name in API_MODULE_NAMES.items()}
ACTIONS = ("error", "delay", "drop")

TopicPartition = tuple[str, int]


def api_key_of(api: str | int) -> int:
    """An API key from its snake_case name ("produce", "init_producer_id") or its number."""
    if isinstance(api, int) or (isinstance(api, str) and api.isdigit()):
        key = int(api)
        if key in API_MODULES:
            return key
    elif api in API_KEYS:
        return API_KEYS[api]
    raise ValueError(f"unknown API {api!r}: use a served API key or one of {', '.join(sorted(API_KEYS))}")


def _has_top_level_error(api_key: int) -> bool:
    fields = RESPONSES[api_key]._json["fields"]
    return any(f["name"] == "ErrorCode" and f.get("versions") == "0+" for f in fields)


@dataclass
class Rule:
    """Do `action` to requests of one API (optionally only Produce requests carrying topic[/partition]).

    Fires on every `every`-th matching request, `count` times (None: for ever).
    """

    api_key: int
    action: str
    topic: str | None = None
    partition: int | None = None
    count: int | None = 1
    every: int = 1
    error_code: int = 0
    delay_ms: int = 0
    after_append: bool = False  # errors only: append first, then answer the error (the client retries a duplicate)
    seen: int = 0
    fired: int = 0

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"action must be one of {ACTIONS}")
        if self.every < 1 or (self.count is not None and self.count < 1):
            raise ValueError("every and count must be at least 1")
        if self.topic is None and self.partition is not None:
            raise ValueError("a partition needs its topic")
        if self.topic is not None and self.api_key != PRODUCE:
            raise ValueError("topic and partition filters apply to Produce requests only")
        if self.action == "error":
            if self.error_code <= 0:
                raise ValueError("an error rule needs a positive Kafka error code")
            ErrorCode(self.error_code)  # ValueError for an unknown code
            if self.api_key != PRODUCE and not _has_top_level_error(self.api_key):
                raise ValueError(f"errors can be injected into Produce and APIs with a top-level error code; "
                                 f"api key {self.api_key} has none at every version")
            if self.after_append and self.api_key != PRODUCE:
                raise ValueError("after_append applies to Produce only")
            # imported here so minibroker.protocol, which quiets kafka-python's import warnings, loads kafka first
            import kafka.errors as kafka_errors

            if self.after_append and not kafka_errors.for_code(self.error_code).retriable:
                # what Kafka answers after appending comes from the replication wait (DelayedProduce):
                # NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT, NOT_LEADER_OR_FOLLOWER..., all
                # retriable in Kafka's Errors (kafka-python's table of them)
                raise ValueError(f"after_append needs a retriable error code: Kafka never appends a batch and "
                                 f"then answers {ErrorCode(self.error_code).name}")
        if self.action == "delay" and self.delay_ms < 0:
            raise ValueError("delay_ms must not be negative")

    def matches(self, ticket: Ticket) -> bool:
        if ticket.api_key != self.api_key:
            return False
        if self.topic is None:
            return True
        return any(self.covers(tp) for tp in ticket.partitions)

    def covers(self, tp: TopicPartition) -> bool:
        """Whether the rule's topic/partition filter takes in this partition."""
        return tp[0] == self.topic and (self.partition is None or tp[1] == self.partition)

    def fire(self) -> bool:
        """Count one matching request; True when the rule acts on it."""
        self.seen += 1
        if self.seen % self.every:
            return False
        self.fired += 1
        if self.count is not None:
            self.count -= 1
        return True

    @property
    def spent(self) -> bool:
        return self.count is not None and self.count <= 0

    def describe(self) -> dict[str, Any]:
        return {"api_key": self.api_key, "action": self.action, "topic": self.topic, "partition": self.partition,
                "remaining": self.count, "every": self.every, "error_code": self.error_code,
                "delay_ms": self.delay_ms, "after_append": self.after_append, "fired": self.fired}


@dataclass(eq=False)
class Ticket:
    """One request received on a connection, until its response is written."""

    api_key: int
    node_id: int
    partitions: list[TopicPartition] = field(default_factory=list)
    request: Any = None  # a Produce body decoded on arrival, until the dispatcher takes it (`decoded`)
    errors: list[tuple[Rule, list[TopicPartition] | None]] = field(default_factory=list)


class Control:
    """What tests can do to a running broker, in process. Every public method is also a remote operation."""

    def __init__(self, broker: Broker, faults: list[Rule] | None = None) -> None:
        self.broker = broker
        self.cluster: Cluster = broker.cluster
        # the rules it starts with (`--fault`, faults.py) stay for the broker's life; `clear()` keeps them
        self.faults: list[Rule] = list(faults or [])
        self.rules: list[Rule] = []  # added by operations
        # outstanding Produce requests per (topic, partition, node), and the most at once; node None: all nodes
        self._outstanding: dict[tuple[str, int, int | None], int] = {}
        self._most: dict[tuple[str, int, int | None], int] = {}
        self._holding: set[TopicPartition] = set()
        self._held: list[tuple[list[TopicPartition], Callable[[], None]]] = []

    @classmethod
    def attach(cls, broker: Broker, faults: list[Rule] | None = None) -> Control:
        """Test control of `broker`, registered on its request hook; `faults` are rules for its whole life."""
        control = cls(broker, faults)
        broker.request_hook = control
        return control

    # -- operations ---------------------------------------------------------------------------

    def hold(self, topic: str, partition: int) -> None:
        """Produce answers for this partition wait (later answers on their connections wait behind them)."""
        self._holding.add((topic, partition))

    def release(self, topic: str, partition: int) -> int:
        """Stop holding the partition and send what was held, in order; returns how many answers were held."""
        self._holding.discard((topic, partition))
        ready = [entry for entry in self._held if not self._still_held(entry[0])]
        self._held = [entry for entry in self._held if self._still_held(entry[0])]
        for _partitions, send in ready:
            send()
        return len(ready)

    def inject_error(self, api: str | int, error_code: int, count: int | None = 1, topic: str | None = None,
                     partition: int | None = None, every: int = 1, after_append: bool = False) -> dict[str, Any]:
        """Answer the next `count` matching requests with `error_code` instead of handling them.

        For Produce with a topic filter only the matching partitions fail; the others are handled.
        `after_append` appends first and answers the error anyway, so the client retries a batch the
        broker already has (as NOT_ENOUGH_REPLICAS_AFTER_APPEND does in Kafka).
        """
        return self._add(Rule(api_key_of(api), "error", topic, partition, count, every, error_code=error_code,
                              after_append=after_append))

    def delay(self, api: str | int, delay_ms: int, count: int | None = 1, topic: str | None = None,
              partition: int | None = None, every: int = 1) -> dict[str, Any]:
        """Hold back the next `count` matching answers by `delay_ms` (later answers wait behind them)."""
        return self._add(Rule(api_key_of(api), "delay", topic, partition, count, every, delay_ms=delay_ms))

    def drop(self, api: str | int, count: int | None = 1, topic: str | None = None, partition: int | None = None,
             every: int = 1) -> dict[str, Any]:
        """Handle the next `count` matching requests, then close their connections instead of answering."""
        return self._add(Rule(api_key_of(api), "drop", topic, partition, count, every))

    def drop_connections(self, node: int | None = None) -> int:
        """Close every client connection (or those of one node) now; returns how many."""
        chosen = [c for c in self.broker.connections if node is None or c.node.node_id == node]
        for connection in chosen:
            connection.drop("test control dropped the connection")
        return len(chosen)

    def move_leader(self, topic: str, partition: int, node: int) -> dict[str, Any]:
        """Make `node` the partition's leader, as AlterPartitionReassignments plus ElectLeaders would."""
        if self.cluster.node(node) is None:
            raise ValueError(f"no node {node}; nodes are {[n.node_id for n in self.cluster.nodes]}")
        self.cluster.replication.move_leader(topic, partition, node)
        moved = self.cluster.partition(topic, partition)
        return {"leader": moved.leader_id, "leader_epoch": moved.log.leader_epoch, "replicas": moved.replicas}

    def in_flight(self, topic: str, partition: int, node: int | None = None) -> dict[str, int]:
        """Produce requests for the partition received and not yet answered: now, and the most at once.

        With `node`, only requests sent to that node count (e.g. the new leader after a move).
        """
        key = (topic, partition, node)
        return {"current": self._outstanding.get(key, 0), "max": self._most.get(key, 0)}

    def reset_in_flight(self) -> None:
        """Forget the most-at-once counts (the current counts stay)."""
        self._most = dict(self._outstanding)

    def clear(self) -> None:
        """Remove every rule added by an operation and release every held partition (start-up faults stay)."""
        self.rules.clear()
        for topic, partition in list(self._holding):
            self.release(topic, partition)

    def status(self) -> dict[str, Any]:
        """Active rules, the start-up faults, held partitions and answers waiting."""
        return {"rules": [rule.describe() for rule in self.rules], "faults": [rule.describe() for rule in self.faults],
                "holding": sorted(f"{t}-{p}" for t, p in self._holding), "held_answers": len(self._held)}

    OPERATIONS = ("hold", "release", "inject_error", "delay", "drop", "drop_connections", "move_leader",
                  "in_flight", "reset_in_flight", "clear", "status")

    # -- the server's request hook (server.connection.RequestHook) --------------------------------

    def request_seen(self, frame: memoryview | bytes | bytearray, node_id: int) -> Ticket:
        """A request arrived at a node: note which partitions it carries and count it as outstanding.

        A Produce request is decoded here, once: the dispatcher takes the body from `decoded`.
        """
        api_key = int.from_bytes(bytes(frame[:2]), "big", signed=True)
        ticket = Ticket(api_key, node_id)
        if api_key == PRODUCE:
            ticket.partitions = self._produce_partitions(ticket, frame)
            for topic, partition in ticket.partitions:
                for key in ((topic, partition, None), (topic, partition, node_id)):
                    now = self._outstanding.get(key, 0) + 1
                    self._outstanding[key] = now
                    if now > self._most.get(key, 0):
                        self._most[key] = now
        for rule in [*self.faults, *self.rules]:
            if rule.action == "error" and rule.matches(ticket) and rule.fire():
                covered = None if rule.topic is None else [tp for tp in ticket.partitions if rule.covers(tp)]
                ticket.errors.append((rule, covered))
                self._forget_if_spent(rule)
        return ticket

    def answer_sent(self, ticket: Ticket) -> None:
        """Its response was written, or its connection closed."""
        for topic, partition in ticket.partitions:
            for key in ((topic, partition, None), (topic, partition, ticket.node_id)):
                self._outstanding[key] = self._outstanding.get(key, 1) - 1

    def answer_ready(self, ticket: Ticket, send: Callable[[], None]) -> AnswerVerdict:
        """A delay or drop rule that applies to this answer, or a held partition, keeps it from going out now."""
        for rule in [*self.faults, *self.rules]:
            if rule.action in ("delay", "drop") and rule.matches(ticket) and rule.fire():
                self._forget_if_spent(rule)
                if rule.action == "drop":
                    return DropConnection(f"fault injection: dropped the response to api key {rule.api_key}")
                log.info("fault injection: delaying a response on node %d by %d ms", ticket.node_id, rule.delay_ms)
                _call_after(rule.delay_ms / 1000, send)
                return LATER
        if ticket.api_key == PRODUCE and self._still_held(ticket.partitions):
            self._held.append((ticket.partitions, send))  # until its partitions are released
            return LATER
        return SEND

    def decoded(self, ticket: Ticket) -> Any:
        """The body decoded on arrival, handed to the dispatcher (and no longer kept here)."""
        request, ticket.request = ticket.request, None
        return request

    def before_handling(self, ticket: Ticket) -> Adjust | None:
        """How this request's injected errors change its handling, if it has any."""
        if not ticket.errors:
            return None

        def adjust(api_key: int, version: int, request: Any) -> tuple[Any, Callable[[Any], None] | None]:
            if api_key != PRODUCE:
                return RESPONSES[api_key](error_code=ticket.errors[0][0].error_code), None
            return None, self._fail_partitions(ticket, version, request)

        return adjust

    def _fail_partitions(self, ticket: Ticket, version: int, request: Any) -> Callable[[Any], None]:
        """Take the failing partitions out of a Produce request (unless after_append); answer their errors."""
        failing: dict[TopicPartition, tuple[int, bool]] = {}
        for rule, covered in ticket.errors:
            for tp in ticket.partitions if covered is None else covered:
                failing.setdefault(tp, (rule.error_code, rule.after_append))
        topic_keys: dict[str, Any] = {}
        for topic_data in request.topic_data:
            key = topic_data.topic_id if version >= 13 else topic_data.name
            name = self._topic_name(key, version)
            topic_keys[name] = key
            topic_data.partition_data = [
                data for data in topic_data.partition_data
                if failing.get((name, data.index), (0, True))[1]  # keep the ones that append first
            ]

        def finish(response: Any) -> None:
            if response is None:
                return  # acks=0: no answer to change
            for (name, index), (code, _after) in failing.items():
                key = topic_keys.get(name, name)
                entries = next((t for t in response.responses
                                if (t.topic_id if version >= 13 else t.name) == key), None)
                if entries is None:
                    entries = produce.topic_response(key, version, [])
                    response.responses.append(entries)
                entries.partition_responses = [p for p in entries.partition_responses if p.index != index]
                failed = produce.error_entry(index, ErrorCode(code))
                if version >= 14:
                    failed.producer_state_batches_to_retain = self.cluster.reported_batches_to_retain(
                        self.cluster.topics.get(name), index)
                entries.partition_responses.append(failed)

        return finish

    def _topic_name(self, key: Any, version: int) -> str:
        if version < 13:
            return str(key)
        topic = self.cluster.topics_by_id.get(key)
        return topic.name if topic is not None else str(key)

    def _still_held(self, partitions: list[TopicPartition]) -> bool:
        return any(tp in self._holding for tp in partitions)

    def _add(self, rule: Rule) -> dict[str, Any]:
        self.rules.append(rule)
        return rule.describe()

    def _forget_if_spent(self, rule: Rule) -> None:
        if rule.spent and rule in self.rules:
            self.rules.remove(rule)

    def _produce_partitions(self, ticket: Ticket, frame: memoryview | bytes | bytearray) -> list[TopicPartition]:
        """The partitions a Produce request carries; its decoded body is kept on the ticket for the dispatcher."""
        try:
            header, request = decode_frame(memoryview(frame))
        except Exception:  # a malformed request: the dispatcher decodes it again and refuses it properly
            return []
        ticket.request = request
        found: list[TopicPartition] = []
        for topic_data in request.topic_data:
            if header.api_version >= 13:
                topic = self.cluster.topics_by_id.get(topic_data.topic_id)
                name = topic.name if topic is not None else str(topic_data.topic_id)
            else:
                name = topic_data.name
            found.extend((name, data.index) for data in topic_data.partition_data)
        return found


def _call_after(seconds: float, callback: Callable[[], None]) -> None:
    """Call back no sooner than `seconds` from now (the loop's timers may fire a little early)."""
    deadline = time.monotonic() + seconds
    loop = asyncio.get_running_loop()

    def check() -> None:
        remaining = deadline - time.monotonic()
        if remaining > 0:
            loop.call_later(remaining, check)
        else:
            callback()

    loop.call_later(seconds, check)


# -- reaching a broker in another process -------------------------------------------------------------


class ControlError(RuntimeError):
    """The broker refused a control operation."""


async def serve_control(control: Control, host: str, port: int) -> asyncio.base_events.Server:
    """Listen for JSON lines `{"op": NAME, "args": {...}}`; each gets `{"ok": true, "result": ...}` or an error."""

    async def session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                writer.write(json.dumps(_run(control, line)).encode() + b"\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    return await asyncio.start_server(session, host, port)


def _run(control: Control, line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
        op, args = message["op"], message.get("args") or {}
        if op not in Control.OPERATIONS or not isinstance(args, dict):
            raise ValueError(f"unknown operation {op!r}: use one of {', '.join(Control.OPERATIONS)}")
        result = getattr(control, op)(**args)
    except (ValueError, TypeError, KeyError) as exc:
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    except Exception as exc:  # e.g. KafkaError from move_leader: report, keep serving
        log.info("control operation failed: %s", exc)
        return {"ok": False, "error": f"{type(exc).__name__}: {getattr(exc, 'message', None) or exc}"}
    log.info("test control: %s %s", op, args)
    return {"ok": True, "result": result}


class ControlClient:
    """Blocking client of a broker's control listener; `client.hold("t", 0)` calls the operation of that name.

    It connects at its first call and again after `close()`, so one client can be shared freely.
    """

    def __init__(self, host: str, port: int, timeout: float = 10.0) -> None:
        self._address = (host, port)
        self._timeout = timeout
        self._socket: socket.socket | None = None
        self._reader: Any = None

    def call(self, op: str, **args: Any) -> Any:
        if self._socket is None:
            self._socket = socket.create_connection(self._address, timeout=self._timeout)
            self._reader = self._socket.makefile("rb")
        self._socket.sendall(json.dumps({"op": op, "args": args}).encode() + b"\n")
        line = self._reader.readline()
        if not line:
            raise ControlError("the control connection closed")
        answer = json.loads(line)
        if not answer["ok"]:
            raise ControlError(answer["error"])
        return answer["result"]

    def __getattr__(self, op: str) -> Callable[..., Any]:
        if op not in Control.OPERATIONS:
            raise AttributeError(op)
        signature = inspect.signature(getattr(Control, op))

        def operation(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(None, *args, **kwargs)  # same positional order as Control's method
            bound.arguments.pop(next(iter(signature.parameters)))
            return self.call(op, **bound.arguments)

        return operation

    def close(self) -> None:
        if self._socket is not None:
            self._reader.close()
            self._socket.close()
            self._socket = self._reader = None

    def __enter__(self) -> ControlClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
