"""Scenarios of the differential suite: steps read from JSON files, sent to one broker over the wire.

A scenario file (tests/differential/scenarios/<name>.json) holds:

    {"description": "what it checks",
     "vars": {"topic": "diff-metadata"},          # names made unique per run from these prefixes
     "xfail": "why the whole scenario is expected to differ (optional)",
     "connections": {"alice": {"listener": "SASL_PLAINTEXT",   # optional: a connection name's listener and
                               "mechanism": "PLAIN", "username": "alice", "password": "alice-secret"}},
     "steps": [{"name": "create",                   # unique in the scenario: the ledger's key
                "api": "CreateTopics", "version": 7,
                "connection": "main",               # optional; one TCP connection per name
                "request": {...},                   # fields in snake_case, as the codec names them
                "capture": {"topic_id": "topics[0].topic_id"},   # values for later steps, per broker
                "until": {"path": "topics[0].error_code", "equals": 0, "timeout_s": 60},
                "expect": "answer"}]}               # or "closed": the broker closes the connection

A raw step sends bytes the codec would not write: a request at a version it cannot encode, an unknown API key, a
header cut short, a frame size over the broker's limit. Its "raw" is one of

    {"api_key": 18, "api_version": 99, "body_hex": "00", "tagged_fields": true}   # a header (client id
            # "differential-<connection>", a correlation id, the empty tagged-field section when
            # "tagged_fields") followed by these body bytes, sent with its size prefix
    {"frame_hex": "001200"}          # these bytes as the whole frame after its size prefix
    {"frame_size": 104857601}        # only a size prefix saying this many bytes follow (none do)

and its "api" and "version" say how the answer is decoded (e.g. ApiVersions v0, as Kafka answers an ApiVersions
version it does not support); a raw step that expects "closed" needs neither. It has no "request".

A step that "expect"s "later" sends its request without waiting for the answer (a JoinGroup the coordinator holds
until the other members rejoin); a later step {"name": ..., "answer_of": "<that step>"} reads it from the same
connection, decoded as that step's api and version, and no step in between uses that connection.

In a request, "${name}" is replaced by a var or an earlier capture (the value itself when it is the whole
string); {"$batch": {...}} is a record batch built with minibroker.protocol.records.build_batch (records as
[key, value] strings, timestamps pinned by the scenario) and {"$hex": "..."} raw bytes. Both brokers get
the same requests; both answers are decoded with the same codec at the same version.

A connection not in "connections" goes to the broker's address (its PLAINTEXT listener). One that is goes to
the named listener, whose port the broker's `listeners` config tells (DescribeConfigs), and with a
"mechanism" logs in (SaslHandshake v1, SaslAuthenticate v2) before its first step; a failed login is a broken
scenario. Without "mechanism" the steps do the SASL exchange themselves.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minibroker.client.security import ClientSecurity
from minibroker.protocol import records
from minibroker.protocol.messages import REQUESTS, DescribeConfigsRequest, MetadataRequest
from minibroker.testing.wire import WireClient

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
#: Kafka's API names (ApiKeys, in CamelCase as its JSON files name them) to the request classes.
API_CLASSES: dict[str, Any] = {cls.__name__.removesuffix("Request"): cls for cls in REQUESTS.values()}
DEFAULT_UNTIL_TIMEOUT_S = 60.0
UNTIL_POLL_S = 0.2
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PATH_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[([a-z_]+)=([^\]]*)\]")


@dataclass
class Step:
    """One request of a scenario."""

    name: str
    api: str = ""
    version: int = -1
    request: dict[str, Any] = field(default_factory=dict)
    connection: str = "main"
    capture: dict[str, str] = field(default_factory=dict)
    until: dict[str, Any] | None = None
    expect: str = "answer"
    raw: dict[str, Any] | None = None
    answer_of: str | None = None

    @property
    def api_key(self) -> int:
        return int(API_CLASSES[self.api].API_KEY)

    @property
    def sent(self) -> tuple[int, int] | None:
        """The (API key, version) the step's request names, where it names one (a step reading an earlier one's
        answer stands for it)."""
        if self.expect == "later":
            return None
        if self.raw is None:
            return self.api_key, self.version
        if "api_key" in self.raw:
            return int(self.raw["api_key"]), int(self.raw["api_version"])
        return None

    def raw_frame(self, client_id: str, correlation_id: int) -> bytes:
        """A raw step's bytes on the wire, size prefix included."""
        assert self.raw is not None
        if "frame_size" in self.raw:
            return struct.pack(">i", int(self.raw["frame_size"]))
        if "frame_hex" in self.raw:
            frame = bytes.fromhex(self.raw["frame_hex"])
        else:
            client = client_id.encode()
            frame = struct.pack(">hhih", self.raw["api_key"], self.raw["api_version"], correlation_id, len(client))
            frame += client + (b"\x00" if self.raw.get("tagged_fields") else b"") + bytes.fromhex(
                self.raw.get("body_hex", ""))
        return struct.pack(">i", len(frame)) + frame


@dataclass
class Connection:
    """Where a named connection goes and how it logs in."""

    listener: str = "PLAINTEXT"
    mechanism: str | None = None
    username: str | None = None
    password: str | None = None


@dataclass
class Scenario:
    """A named list of steps and the vars they use."""

    name: str
    description: str
    steps: list[Step]
    vars: dict[str, str] = field(default_factory=dict)
    xfail: str | None = None
    connections: dict[str, Connection] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Scenario:
        data = json.loads(path.read_text())
        steps = [Step(**step) for step in data["steps"]]
        names = [step.name for step in steps]
        if len(set(names)) != len(names):
            raise ValueError(f"{path.name}: step names must be unique: {names}")
        for index, step in enumerate(steps):
            if step.answer_of is not None:
                _link_answer_of(path.name, steps, index)
            if step.raw is not None:
                _check_raw(path.name, step)
            elif step.api not in API_CLASSES:
                raise ValueError(f"{path.name}: step {step.name}: unknown API {step.api!r}")
            if step.expect not in ("answer", "closed", "later"):
                raise ValueError(f"{path.name}: step {step.name}: expect is 'answer', 'closed' or 'later'")
            if step.expect == "later" and not any(other.answer_of == step.name for other in steps[index:]):
                raise ValueError(f"{path.name}: step {step.name}: no later step reads its answer (answer_of)")
        connections = {name: Connection(**spec) for name, spec in data.get("connections", {}).items()}
        return cls(path.stem, data.get("description", ""), steps, data.get("vars", {}), data.get("xfail"),
                   connections)

    def make_vars(self) -> dict[str, str]:
        """This run's values of the vars: the prefix and a random suffix, so reruns against the same
        reference broker never meet an earlier run's topics (normalisation maps them back to ${name})."""
        suffix = uuid.uuid4().hex[:8]
        return {name: f"{prefix}-{suffix}" for name, prefix in self.vars.items()}


def _link_answer_of(file: str, steps: list[Step], index: int) -> None:
    """A step reading an earlier one's answer: checked, and given that step's api, version and connection."""
    step = steps[index]
    sent = next((i for i, other in enumerate(steps[:index]) if other.name == step.answer_of), None)
    if sent is None or steps[sent].expect != "later":
        raise ValueError(f"{file}: step {step.name}: answer_of names no earlier step that expects 'later'")
    if step.api or step.request or step.raw or step.until or step.expect != "answer":
        raise ValueError(f"{file}: step {step.name}: a step with answer_of has only a name and captures")
    between = [other.name for other in steps[sent + 1:index] if other.connection == steps[sent].connection]
    if between:
        raise ValueError(f"{file}: step {step.name}: {between} use the connection its answer comes on")
    step.api, step.version, step.connection = steps[sent].api, steps[sent].version, steps[sent].connection


_RAW_FORMS = ({"api_key", "api_version"}, {"frame_hex"}, {"frame_size"})
_RAW_KEYS = {"api_key", "api_version", "body_hex", "tagged_fields", "frame_hex", "frame_size"}


def _check_raw(file: str, step: Step) -> None:
    assert step.raw is not None
    where = f"{file}: step {step.name}"
    if set(step.raw) - _RAW_KEYS or sum(1 for form in _RAW_FORMS if form <= set(step.raw)) != 1:
        raise ValueError(f"{where}: raw is one of api_key/api_version[/body_hex/tagged_fields], frame_hex, "
                         f"frame_size: {step.raw}")
    if step.request or step.capture or step.until:
        raise ValueError(f"{where}: a raw step has no request, capture or until")
    if step.expect == "answer" and step.api not in API_CLASSES:
        raise ValueError(f"{where}: a raw step expecting an answer names the API it is decoded as")


def all_scenarios() -> list[Scenario]:
    return [Scenario.load(path) for path in sorted(SCENARIOS.glob("*.json"))]


@dataclass
class Answer:
    """What one broker answered to one step: the decoded response as plain values, or that it closed."""

    step: Step
    response: dict[str, Any] | None
    closed: bool
    sent_at_ms: int  # wall clock when the (last) request was sent: timestamps are normalised around it
    attempts: int = 1


def run(scenario: Scenario, host: str, port: int, names: dict[str, str]) -> list[Answer]:
    """Run every step against the broker at host:port; `names` are this run's vars."""
    values: dict[str, Any] = dict(names)
    connections: dict[str, WireClient] = {}
    listeners: dict[str, tuple[str, int]] = {}

    def connect(name: str) -> WireClient:
        spec = scenario.connections.get(name)
        if spec is None or spec.listener == "PLAINTEXT":
            address = (host, port)
        else:
            if not listeners:
                listeners.update(listener_addresses(host, port))
            address = listeners[spec.listener]
        security = None
        if spec is not None and spec.mechanism is not None:
            security = ClientSecurity.from_config({"security.protocol": spec.listener, "sasl.mechanism": spec.mechanism,
                                                   "sasl.username": spec.username, "sasl.password": spec.password})
        return WireClient(*address, client_id=f"differential-{name}", security=security)

    answers = []
    try:
        for step in scenario.steps:
            answers.append(_run_step(step, connect, values, connections))
    finally:
        for wire in connections.values():
            wire.close()
    return answers


def listener_addresses(host: str, port: int) -> dict[str, tuple[str, int]]:
    """The broker's listeners by name, from its `listeners` config (DescribeConfigs of its node)."""
    with WireClient(host, port, client_id="differential-listeners") as wire:
        metadata = wire.request(build(MetadataRequest, {"topics": [], "allow_auto_topic_creation": False,
                                                       "include_topic_authorized_operations": False}), 12)
        node_id = metadata.brokers[0].node_id
        described = wire.request(build(DescribeConfigsRequest, {
            "resources": [{"resource_type": 4, "resource_name": str(node_id), "configuration_keys": ["listeners"]}],
            "include_synonyms": False, "include_documentation": False}), 4)
    value = next(item.value for item in described.results[0].configs if item.name == "listeners")
    addresses = {}
    for item in value.split(","):
        name, _, address = item.strip().partition("://")
        listener_host, _, number = address.rpartition(":")
        addresses[name] = (listener_host or host, int(number))
    return addresses


def _run_step(step: Step, connect: Callable[[str], WireClient], values: dict[str, Any],
              connections: dict[str, WireClient]) -> Answer:
    if step.raw is not None:
        return _run_raw_step(step, connect, connections)
    if step.answer_of is not None:
        return _read_answer(step, connections, values)
    request_class = API_CLASSES[step.api]
    deadline = time.monotonic() + float((step.until or {}).get("timeout_s", DEFAULT_UNTIL_TIMEOUT_S))
    attempts = 0
    while True:
        attempts += 1
        if step.connection not in connections:
            connections[step.connection] = connect(step.connection)
        wire = connections[step.connection]
        request = build(request_class, substitute(step.request, values))
        sent_at_ms = int(time.time() * 1000)
        if step.expect == "later":
            wire.send_raw(wire.encode_request(request, step.version))
            return Answer(step, None, False, sent_at_ms, attempts)
        if step.expect == "closed":
            try:
                wire.send_raw(wire.encode_request(request, step.version))
                closed = wire.is_closed_by_peer(timeout=10.0)
            except OSError:  # the broker closed it after an earlier step (a refused login): reset or broken pipe
                closed = True
            del connections[step.connection]
            wire.close()
            return Answer(step, None, closed, sent_at_ms, attempts)
        try:
            response = wire.request(request, step.version)
        except ConnectionError:
            del connections[step.connection]
            wire.close()
            return Answer(step, None, True, sent_at_ms, attempts)
        answer = plain(response, step.version)
        if step.until is None or lookup(answer, step.until["path"]) == step.until["equals"] \
                or time.monotonic() >= deadline:
            break
        time.sleep(UNTIL_POLL_S)  # Kafka's asynchronous steps: poll, bounded by the deadline
    for name, path in step.capture.items():
        values[name] = lookup(response, path)  # as decoded: the codec encodes it back as it is
    return Answer(step, answer, False, sent_at_ms, attempts)


def _read_answer(step: Step, connections: dict[str, WireClient], values: dict[str, Any]) -> Answer:
    """The answer to an earlier step sent without waiting (expect "later"), read from its connection."""
    wire = connections[step.connection]
    sent_at_ms = int(time.time() * 1000)
    try:
        _, response = wire.decode_response(wire.read_frame(), step.api_key, step.version)
    except ConnectionError:
        del connections[step.connection]
        wire.close()
        return Answer(step, None, True, sent_at_ms)
    for name, path in step.capture.items():
        values[name] = lookup(response, path)
    return Answer(step, plain(response, step.version), False, sent_at_ms)


RAW_CORRELATION_ID = 7


def _run_raw_step(step: Step, connect: Callable[[str], WireClient], connections: dict[str, WireClient]) -> Answer:
    """Send a raw step's bytes; the answer decoded as its api and version, or whether the broker closed."""
    if step.connection not in connections:
        connections[step.connection] = connect(step.connection)
    wire = connections[step.connection]
    sent_at_ms = int(time.time() * 1000)
    try:
        wire.send_raw(step.raw_frame(wire.client_id, RAW_CORRELATION_ID))
        if step.expect == "closed":
            closed = wire.is_closed_by_peer(timeout=10.0)
        else:
            frame = wire.read_frame()
            _, response = wire.decode_response(frame, int(API_CLASSES[step.api].API_KEY), step.version)
            return Answer(step, plain(response, step.version), False, sent_at_ms)
    except TimeoutError:  # neither answered nor closed
        closed = False
    except OSError:  # reset, broken pipe, or closed before answering (ConnectionError)
        closed = True
    del connections[step.connection]
    wire.close()
    return Answer(step, None, closed, sent_at_ms)


def check_followed(scenario: Scenario, answers: list[Answer]) -> None:
    """RuntimeError unless the broker (Kafka) followed `scenario`: closed where a step expects it, answered
    elsewhere, reached every `until`. A scenario Kafka itself does not follow is broken, not a difference."""
    for answer in answers:
        step = answer.step
        if step.expect == "closed":
            if not answer.closed:
                raise RuntimeError(f"{scenario.name}/{step.name}: Kafka did not close the connection")
        elif answer.closed:
            raise RuntimeError(f"{scenario.name}/{step.name}: Kafka closed the connection")
        elif step.until and lookup(answer.response, step.until["path"]) != step.until["equals"]:
            raise RuntimeError(f"{scenario.name}/{step.name}: Kafka never reached {step.until}")


# --- requests ------------------------------------------------------------------------------------

def substitute(value: Any, values: dict[str, Any]) -> Any:
    """`value` with ${name} placeholders replaced; a whole-string placeholder becomes the value itself."""
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole:
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), value)
    if isinstance(value, list):
        return [substitute(item, values) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, values) for key, item in value.items()}
    return value


def build(data_class: Any, fields: dict[str, Any]) -> Any:
    """A message or struct of `data_class` from plain values, nested structs included."""
    struct_fields = data_class._struct.fields
    kwargs = {}
    for name, value in fields.items():
        if name not in struct_fields:
            raise ValueError(f"{data_class.__name__} has no field {name!r} (fields: {list(struct_fields)})")
        spec = struct_fields[name]
        if spec.is_struct() and value is not None:
            kwargs[name] = build(getattr(data_class, spec.type_str), value)
        elif spec.is_struct_array() and value is not None:
            kwargs[name] = [build(getattr(data_class, spec.type_str), item) for item in value]
        else:
            kwargs[name] = _scalar(value)
    return data_class(**kwargs)


def _scalar(value: Any) -> Any:
    if isinstance(value, dict) and len(value) == 1:
        (kind, spec), = value.items()
        if kind == "$hex":
            return bytes.fromhex(spec)
        if kind == "$batch":
            spec = dict(spec)
            pairs = [(_utf8(key), _utf8(val)) for key, val in spec.pop("records")]
            return records.build_batch(pairs, **spec)
    if isinstance(value, dict):
        raise ValueError(f"not a request value: {value!r}")
    return value


def _utf8(value: str | None) -> bytes | None:
    return None if value is None else value.encode()


# --- answers -------------------------------------------------------------------------------------

def plain(message: Any, version: int) -> dict[str, Any]:
    """A decoded message as JSON values: every field of `version` (tagged ones too), UUIDs in Kafka's
    base64 form, bytes as "hex:...", and `_tags` listing the tagged fields that were on the wire."""
    out: dict[str, Any] = {}
    for spec in message._struct._fields:
        if not spec.for_version_q(version):
            continue
        value = getattr(message, spec.name)
        if value is None:
            out[spec.name] = None
        elif spec.is_struct():
            out[spec.name] = plain(value, version)
        elif spec.is_struct_array():
            out[spec.name] = [plain(item, version) for item in value]
        else:
            out[spec.name] = _plain_value(value)
    if message.tags:
        out["_tags"] = sorted(message.tags)
    if message.unknown_tags:
        out["_unknown_tags"] = {str(tag): _plain_value(raw) for tag, raw in sorted(message.unknown_tags.items())}
    return out


def _plain_value(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return kafka_uuid(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "hex:" + bytes(value).hex()
    if isinstance(value, (list, tuple)):
        return [_plain_value(item) for item in value]
    if isinstance(value, (set, frozenset)):  # a bitfield (authorized operations): its members in order
        return sorted(value)
    return value


def kafka_uuid(value: uuid.UUID) -> str:
    """A UUID as Kafka prints it (Uuid.toString: URL-safe base64 without padding)."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode()


def lookup(data: Any, path: str) -> Any:
    """The value at `path` ("topics[0].partitions[partition_index=0].error_code") in plain values or a decoded
    message; None where it is missing."""
    for part in path.split("."):
        for name, index, key, wanted in _PATH_PART.findall(part):
            if data is None:
                return None
            if name:
                data = _get(data, name)
            elif index:
                data = data[int(index)] if isinstance(data, list) and int(index) < len(data) else None
            else:
                data = next((item for item in data or () if str(_get(item, key)) == wanted), None)
    return data


def _get(data: Any, name: str) -> Any:
    return data.get(name) if isinstance(data, dict) else getattr(data, name, None)
