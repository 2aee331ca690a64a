"""Malformed requests close the connection as Kafka does, logged in one line; nothing else breaks.

Kafka's generated readers throw on a null (-1 length) in a field its JSON definition does not
make nullable ("non-nullable field topicData was serialized as null"), and the broker closes
the connection. kafka-python's engine reads such a null as None whatever the schema says, so
without a check of its own the broker handed None to the handlers, which raised and logged
tracebacks. These tests put a null into every non-nullable field of every request at every
served version, then drive thousands of randomly mutated real requests (fixed seed) through
the dispatcher in process and a burst of them through a real broker over TCP.
"""

from __future__ import annotations

import random
import re
import socket
import struct
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kafka.protocol.api_message import ApiMessage

from minibroker.apis import API_MODULES, accepted_versions
from minibroker.apis.context import CloseConnection, Session
from minibroker.apis.dispatch import Deferred, Reply, handle_frame
from minibroker.apis.releases import LATEST
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import Node
from minibroker.protocol.errors import KafkaError
from minibroker.protocol.messages import REQUESTS, MetadataRequest, ProduceRequest
from minibroker.testing.wire import WireClient
from tests.integration.test_api_version_matrix import BUILDERS

# what a `latest` node serves (Kafka 4.3's ranges: a module's 4.4-only versions are for 4.4 nodes)
SERVED = [(key, version) for key, (low, high) in sorted(accepted_versions(LATEST).items())
          for version in range(low, high + 1)]
SEED = 11
FRAMES_PER_VERSION = 40  # about 9,000 frames in all, a few seconds


def _ids(pairs: list[tuple[int, int]]) -> list[str]:
    return [f"{REQUESTS[key].__name__.removesuffix('Request')}-v{version}" for key, version in pairs]


def frame(api_key: int, version: int, body: bytes, correlation_id: int = 7) -> bytes:
    """Request header (v1, or v2 when flexible) and body, without the size prefix."""
    header = struct.pack(">hhih", api_key, version, correlation_id, 4) + b"fuzz"
    if REQUESTS[api_key].flexible_version_q(version):
        header += b"\x00"
    return header + body


def sized(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


# --- a request with every field set, from the JSON definitions --------------------------------------


def _in_versions(spec: str | None, version: int) -> bool:
    if spec is None or spec.strip() in ("", "none"):
        return False
    if spec.endswith("+"):
        return version >= int(spec[:-1])
    low, _, high = spec.partition("-")
    return int(low) <= version <= int(high or low)


def _attr(json_name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", json_name).lower()


#: The uuid of every built request: the same bytes each run, so the seeded mutations replay exactly.
_UUID = uuid.UUID("3f2a9c4e-7b1d-4e8a-9c6f-0d5e2b7a1c84")
_SIMPLE = {"int8": 1, "int16": 1, "uint16": 1, "int32": 1, "int64": 1, "float64": 1.0, "bool": True,
           "string": "x", "bytes": b"x", "records": b"x"}


def _fields(cls: Any, fields: list[dict[str, Any]], version: int) -> Iterator[tuple[dict[str, Any], str]]:
    flexible = cls.flexible_version_q(version)
    for field in fields:
        tagged = flexible and "tag" in field and _in_versions(field.get("taggedVersions"), version)
        if _in_versions(field.get("versions"), version) and not tagged:
            yield field, _attr(field["name"])


def _value(owner: Any, top: Any, field: dict[str, Any], version: int) -> Any:
    type_str: str = field["type"]
    inner = type_str.removeprefix("[]")
    if "fields" in field:
        item = _struct(getattr(owner, inner), top, field["fields"], version)
        return [item] if type_str.startswith("[]") else item
    simple = _UUID if inner == "uuid" else _SIMPLE[inner]
    return [simple] if type_str.startswith("[]") else simple


def _struct(cls: Any, top: Any, fields: list[dict[str, Any]], version: int) -> Any:
    return cls(**{attr: _value(cls, top, field, version) for field, attr in _fields(top, fields, version)})


def full_request(api_key: int, version: int) -> Any:
    """A request of `api_key` with every untagged field set and every array holding one element."""
    cls = REQUESTS[api_key]
    return _struct(cls, cls, cls.json["fields"], version)


def non_nullable_paths(api_key: int, version: int) -> Iterator[tuple[list[str], str, str]]:
    """(attribute path, Kafka's field name, what is null) for each place Kafka refuses a null."""
    cls = REQUESTS[api_key]

    def walk(fields: list[dict[str, Any]], path: list[str]) -> Iterator[tuple[list[str], str, str]]:
        for field, attr in _fields(cls, fields, version):
            name = field["name"][0].lower() + field["name"][1:]  # the Java field name
            nullable = _in_versions(field.get("nullableVersions"), version)
            type_str = field["type"]
            array = type_str.startswith("[]")
            if not nullable and (array or type_str in ("string", "bytes", "records")):
                yield [*path, attr], name, "field"
            if type_str in ("[]string", "[]bytes"):
                yield [*path, attr, "0"], name, "element"
            if "fields" in field:
                yield from walk(field["fields"], [*path, attr, "0"] if array else [*path, attr])

    yield from walk(cls.json["fields"], [])


def with_null_at(request: Any, path: list[str]) -> Any:
    """`request` with the value at `path` (attribute names and list indexes) set to None."""
    owner = request
    for step in path[:-1]:
        owner = owner[int(step)] if step.isdigit() else getattr(owner, step)
    if path[-1].isdigit():
        owner[int(path[-1])] = None
    else:
        setattr(owner, path[-1], None)
    return request


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    cluster = Cluster(nodes=[Node(0, "127.0.0.1", 9092)])
    cluster.create_topic("fuzz", 2, 1)
    return cluster


def answer(cluster: Cluster, data: bytes) -> bytes | None:
    """The bytes the broker would send for one request frame; CloseConnection/KafkaError when it closes instead."""
    outcome = handle_frame(memoryview(data), cluster, cluster.nodes[0], Session(client_host="/127.0.0.1"))
    if isinstance(outcome, Deferred):  # do not wait: end the wait now and build the answer
        outcome.pending.complete()
        return outcome.encode(outcome.pending.result())
    return outcome.data if isinstance(outcome, Reply) else None


# --- a null in each non-nullable field ------------------------------------------------------------


@pytest.mark.parametrize(("api_key", "version"), SERVED, ids=_ids(SERVED))
def test_null_in_a_non_nullable_field_closes_the_connection_with_kafkas_message(cluster, api_key, version):
    try:  # with no null, the request is read (whatever its handler then makes of the values)
        answer(cluster, frame(api_key, version, bytes(full_request(api_key, version).encode(version=version))))
    except (CloseConnection, KafkaError) as exc:
        assert "serialized as null" not in str(exc)
    for path, name, what in non_nullable_paths(api_key, version):
        # the engine's own encode: MetadataRequest's would turn a v0 null into an empty array
        body = bytes(ApiMessage.encode(with_null_at(full_request(api_key, version), path), version=version))
        with pytest.raises(CloseConnection) as closed:
            answer(cluster, frame(api_key, version, body))
        expected = f"non-nullable field {name} was serialized as null" if what == "field" else \
            f"non-nullable field {name} element was serialized as null"
        assert str(closed.value).startswith("Error getting request for apiKey: "), path
        assert str(closed.value).endswith(f", apiVersion: {version}: {expected}"), path


def test_every_request_with_a_non_nullable_field_is_covered():
    covered = {key for key, version in SERVED if any(non_nullable_paths(key, version))}
    # InitProducerId, DescribeAcls and DescribeCluster have only numbers and nullable fields
    assert covered == set(API_MODULES) - {22, 29, 60}
    assert ([p for p, _, _ in non_nullable_paths(0, 9)] ==
            [["topic_data"], ["topic_data", "0", "name"], ["topic_data", "0", "partition_data"]])


def test_compact_string_longer_than_an_int16_closes_the_connection(cluster):
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name="t" * 40_000)],
                              allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    with pytest.raises(CloseConnection, match="string field name had invalid length 40000$"):
        answer(cluster, frame(3, 12, bytes(request.encode(version=12))))


# --- random mutations of real requests --------------------------------------------------------------


class Env:
    """What the matrix builders need: a topic, by name and by id."""

    def __init__(self, cluster: Cluster) -> None:
        self.topic = "fuzz"
        self.topic_id = cluster.topics["fuzz"].topic_id


_EXTREMES = (0, -1, 1, 2**15 - 1, -(2**15), 2**31 - 1, -(2**31))


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One of: flipped bytes, a cut, a -1 (null) length written somewhere, inserted bytes, an extreme int."""
    out = bytearray(data)
    if not out:
        return bytes(out)
    at = rng.randrange(len(out))
    kind = rng.randrange(5)
    if kind == 0:
        for _ in range(rng.randint(1, 3)):
            out[rng.randrange(len(out))] = rng.randrange(256)
    elif kind == 1:
        del out[at:]
    elif kind == 2:
        width = rng.choice((1, 2, 4))
        out[at:at + width] = b"\xff" * width if rng.random() < 0.7 else b"\x00" * width
    elif kind == 3:
        out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 4)))
    else:
        out[at:at + 4] = struct.pack(">i", rng.choice(_EXTREMES))
    return bytes(out)


def fuzzed_frames(cluster: Cluster, per_version: int, seed: int) -> Iterator[tuple[int, int, bytes]]:
    rng = random.Random(seed)
    env = Env(cluster)
    for api_key, version in SERVED:
        build, _ = BUILDERS[api_key]
        body = bytes(build(env, version).encode(version=version))
        for i in range(per_version):
            whole = frame(api_key, version, body, correlation_id=i)
            # mostly the body; now and then the header too
            yield api_key, version, mutate(rng, whole) if i % 8 == 0 else frame(api_key, version, mutate(rng, body), i)


def test_fuzzed_frames_are_answered_or_close_the_connection_and_nothing_else(cluster):
    unexpected = []
    for api_key, version, data in fuzzed_frames(cluster, FRAMES_PER_VERSION, SEED):
        try:
            answer(cluster, data)
        except (CloseConnection, KafkaError):
            pass  # a controlled close, as the connection does it
        except Exception as exc:  # what the connection would log as an internal error
            unexpected.append(f"api {api_key} v{version}: {type(exc).__name__}: {exc} ({data.hex()})")
    assert not unexpected, f"{len(unexpected)} frames raised:\n" + "\n".join(unexpected[:20])
    # the broker state is intact: a well-formed request is answered
    reply = answer(cluster, frame(3, 12, bytes(MetadataRequest(topics=None).encode(version=12))))
    assert reply is not None
    _, metadata = WireClient.decode_response(reply[4:], 3, 12)
    assert "fuzz" in [t.name for t in metadata.topics]


# --- over TCP ------------------------------------------------------------------------------------------


def test_null_field_over_tcp_closes_only_that_connection_logged_in_one_line(broker):
    request = ProduceRequest(transactional_id=None, acks=-1, timeout_ms=1000, topic_data=None)
    with WireClient(broker.host, broker.port) as wire:
        port = wire.sock.getsockname()[1]
        wire.send_raw(wire.encode_request(request, 9))
        assert wire.is_closed_by_peer()
    with WireClient(broker.host, broker.port) as other:
        assert other.request(MetadataRequest(topics=[]), 12).brokers
    log = broker.log_text()
    lines = [line for line in log.splitlines() if f":{port}:" in line]
    assert len(lines) == 1 and lines[0].endswith(
        f"closing connection from 127.0.0.1:{port}: Error getting request for apiKey: PRODUCE, apiVersion: 9: "
        "non-nullable field topicData was serialized as null"), lines
    assert "Traceback" not in log


def test_a_burst_of_fuzzed_frames_over_tcp_leaves_no_traceback_and_the_broker_serving(broker, cluster):
    frames = list(fuzzed_frames(cluster, 2, SEED + 1))
    for _, _, data in frames:
        with socket.create_connection((broker.host, broker.port), timeout=5) as sock:
            sock.sendall(sized(data))  # each on its own connection, left as soon as it is sent
    with WireClient(broker.host, broker.port) as other:
        assert other.request(MetadataRequest(topics=[]), 12).brokers
    log = broker.log_text()
    assert broker.alive()
    assert "Traceback" not in log and "internal error" not in log
