"""Message classes for every API the broker speaks, each created on first use.

kafka-python's schema engine compiles Kafka's JSON definitions; it bundles
Kafka's files, and `schemas/` (installed as `minibroker.schemas`) adds the ones
we extend, such as Produce v14 for KIP-1269. `decode_request` reads a request
body as Kafka's generated readers do, refusing a null where the definition
allows none.

Creating a class reads and compiles its definition (about 1 ms each, 118 classes), so a class is created when
its name is first imported from this module or looked up in REQUESTS or RESPONSES: a broker creates only those
of the APIs its clients call. `API_NAMES` gives every API key without creating anything.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re
import sys
import threading
import types
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka.protocol.api_message import ApiMessage
from kafka.protocol.schemas.fields.codecs import Bytes, UnsignedVarInt32

from . import quiet_schema_loading
from .first_use import LoadedOnFirstUse

if TYPE_CHECKING:  # created on first use by __getattr__ below
    from kafka.protocol.admin import (  # noqa: F401
        AlterConfigsRequest,
        AlterConfigsResponse,
        AlterPartitionReassignmentsRequest,
        AlterPartitionReassignmentsResponse,
        AlterReplicaLogDirsRequest,
        AlterReplicaLogDirsResponse,
        CreateAclsRequest,
        CreateAclsResponse,
        CreatePartitionsRequest,
        CreatePartitionsResponse,
        CreateTopicsRequest,
        CreateTopicsResponse,
        DeleteAclsRequest,
        DeleteAclsResponse,
        DeleteRecordsRequest,
        DeleteRecordsResponse,
        DeleteTopicsRequest,
        DeleteTopicsResponse,
        DescribeAclsRequest,
        DescribeAclsResponse,
        DescribeClusterRequest,
        DescribeClusterResponse,
        DescribeConfigsRequest,
        DescribeConfigsResponse,
        DescribeLogDirsRequest,
        DescribeLogDirsResponse,
        DescribeProducersRequest,
        DescribeProducersResponse,
        DescribeTopicPartitionsRequest,
        DescribeTopicPartitionsResponse,
        ElectLeadersRequest,
        ElectLeadersResponse,
        IncrementalAlterConfigsRequest,
        IncrementalAlterConfigsResponse,
        ListConfigResourcesRequest,
        ListConfigResourcesResponse,
        ListPartitionReassignmentsRequest,
        ListPartitionReassignmentsResponse,
        UpdateFeaturesRequest,
        UpdateFeaturesResponse,
    )
    from kafka.protocol.admin.groups import (  # noqa: F401
        DescribeGroupsRequest,
        DescribeGroupsResponse,
        ListGroupsRequest,
        ListGroupsResponse,
    )
    from kafka.protocol.admin.transactions import (  # noqa: F401
        DescribeTransactionsRequest,
        DescribeTransactionsResponse,
        ListTransactionsRequest,
        ListTransactionsResponse,
    )
    from kafka.protocol.admin.users import (  # noqa: F401
        AlterUserScramCredentialsRequest,
        AlterUserScramCredentialsResponse,
        DescribeUserScramCredentialsRequest,
        DescribeUserScramCredentialsResponse,
    )
    from kafka.protocol.consumer import (  # noqa: F401
        FetchRequest,
        FetchResponse,
        ListOffsetsRequest,
        ListOffsetsResponse,
        OffsetForLeaderEpochRequest,
        OffsetForLeaderEpochResponse,
    )
    from kafka.protocol.consumer.group import (  # noqa: F401
        HeartbeatRequest,
        HeartbeatResponse,
        JoinGroupRequest,
        JoinGroupResponse,
        LeaveGroupRequest,
        LeaveGroupResponse,
        OffsetCommitRequest,
        OffsetCommitResponse,
        OffsetDeleteRequest,
        OffsetDeleteResponse,
        OffsetFetchRequest,
        OffsetFetchResponse,
        SyncGroupRequest,
        SyncGroupResponse,
    )
    from kafka.protocol.metadata import (  # noqa: F401
        ApiVersionsRequest,
        ApiVersionsResponse,
        MetadataRequest,
        MetadataResponse,
    )
    from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse  # noqa: F401
    from kafka.protocol.producer import (  # noqa: F401
        AddOffsetsToTxnRequest,
        AddOffsetsToTxnResponse,
        AddPartitionsToTxnRequest,
        AddPartitionsToTxnResponse,
        EndTxnRequest,
        EndTxnResponse,
        InitProducerIdRequest,
        InitProducerIdResponse,
        TxnOffsetCommitRequest,
        TxnOffsetCommitResponse,
    )
    from kafka.protocol.sasl import (  # noqa: F401
        SaslAuthenticateRequest,
        SaslAuthenticateResponse,
        SaslHandshakeRequest,
        SaslHandshakeResponse,
    )

    class ProduceRequest(ApiMessage):
        def expect_response(self) -> bool: ...

    class ProduceResponse(ApiMessage): ...
    class DeleteGroupsRequest(ApiMessage): ...
    class DeleteGroupsResponse(ApiMessage): ...
    class ShareGroupHeartbeatRequest(ApiMessage): ...
    class ShareGroupHeartbeatResponse(ApiMessage): ...
    class ShareGroupDescribeRequest(ApiMessage): ...
    class ShareGroupDescribeResponse(ApiMessage): ...
    class ShareFetchRequest(ApiMessage): ...
    class ShareFetchResponse(ApiMessage): ...
    class ShareAcknowledgeRequest(ApiMessage): ...
    class ShareAcknowledgeResponse(ApiMessage): ...
    class DescribeShareGroupOffsetsRequest(ApiMessage): ...
    class DescribeShareGroupOffsetsResponse(ApiMessage): ...
    class AlterShareGroupOffsetsRequest(ApiMessage): ...
    class AlterShareGroupOffsetsResponse(ApiMessage): ...
    class DeleteShareGroupOffsetsRequest(ApiMessage): ...
    class DeleteShareGroupOffsetsResponse(ApiMessage): ...
    class ConsumerGroupHeartbeatRequest(ApiMessage): ...
    class ConsumerGroupHeartbeatResponse(ApiMessage): ...
    class ConsumerGroupDescribeRequest(ApiMessage): ...
    class ConsumerGroupDescribeResponse(ApiMessage): ...
    class StreamsGroupHeartbeatRequest(ApiMessage): ...
    class StreamsGroupHeartbeatResponse(ApiMessage): ...
    class StreamsGroupDescribeRequest(ApiMessage): ...
    class StreamsGroupDescribeResponse(ApiMessage): ...


def _find_schemas() -> None:
    """Make `minibroker.schemas` importable in a source checkout too.

    Installed, it is the package `schemas/` is mapped to (pyproject.toml). A checkout has no
    minibroker/schemas, and Python imports the checkout's `minibroker/` whenever it runs from the
    repository root (the current directory comes first on sys.path), even with a wheel installed; so there
    the package is the top-level `schemas/` beside it. kafka-python's load_json reads definitions with
    importlib.resources.read_text("minibroker.schemas", ...), which needs it in sys.modules.
    """
    if importlib.util.find_spec("minibroker.schemas") is not None:
        return
    directory = Path(__file__).resolve().parents[2] / "schemas"
    spec = importlib.util.spec_from_file_location("minibroker.schemas", directory / "__init__.py",
                                                  submodule_search_locations=[str(directory)])
    if spec is None or spec.loader is None or not directory.is_dir():
        raise ModuleNotFoundError(f"minibroker.schemas is not installed and {directory} is missing")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    sys.modules["minibroker"].schemas = module  # type: ignore[attr-defined]  # as an import would


_find_schemas()

import minibroker.schemas as _schemas  # noqa: E402

# API key: the API's name, and the kafka-python module whose Request and Response classes it uses (None: this
# module defines them from schemas/, see _OWN_CLASSES). In key order.
API_NAMES: dict[int, str] = {}
_KAFKA_MODULES: dict[str, str | None] = {}
for _key, _name, _module in (
    (0, "Produce", None),
    (1, "Fetch", "kafka.protocol.consumer.fetch"),
    (2, "ListOffsets", "kafka.protocol.consumer.offsets"),
    (3, "Metadata", "kafka.protocol.metadata.metadata"),
    (8, "OffsetCommit", "kafka.protocol.consumer.group"),
    (9, "OffsetFetch", "kafka.protocol.consumer.group"),
    (10, "FindCoordinator", "kafka.protocol.metadata.find_coordinator"),
    (11, "JoinGroup", "kafka.protocol.consumer.group"),
    (12, "Heartbeat", "kafka.protocol.consumer.group"),
    (13, "LeaveGroup", "kafka.protocol.consumer.group"),
    (14, "SyncGroup", "kafka.protocol.consumer.group"),
    (15, "DescribeGroups", "kafka.protocol.admin.groups"),
    (16, "ListGroups", "kafka.protocol.admin.groups"),
    (17, "SaslHandshake", "kafka.protocol.sasl"),
    (18, "ApiVersions", "kafka.protocol.metadata.api_versions"),
    (19, "CreateTopics", "kafka.protocol.admin.topics"),
    (20, "DeleteTopics", "kafka.protocol.admin.topics"),
    (21, "DeleteRecords", "kafka.protocol.admin.topics"),
    (22, "InitProducerId", "kafka.protocol.producer.transaction"),
    (23, "OffsetForLeaderEpoch", "kafka.protocol.consumer.offsets"),
    (24, "AddPartitionsToTxn", "kafka.protocol.producer.transaction"),
    (25, "AddOffsetsToTxn", "kafka.protocol.producer.transaction"),
    (26, "EndTxn", "kafka.protocol.producer.transaction"),
    (28, "TxnOffsetCommit", "kafka.protocol.producer.transaction"),
    (29, "DescribeAcls", "kafka.protocol.admin.acl"),
    (30, "CreateAcls", "kafka.protocol.admin.acl"),
    (31, "DeleteAcls", "kafka.protocol.admin.acl"),
    (32, "DescribeConfigs", "kafka.protocol.admin.configs"),
    (33, "AlterConfigs", "kafka.protocol.admin.configs"),
    (34, "AlterReplicaLogDirs", "kafka.protocol.admin.cluster"),
    (35, "DescribeLogDirs", "kafka.protocol.admin.cluster"),
    (36, "SaslAuthenticate", "kafka.protocol.sasl"),
    (37, "CreatePartitions", "kafka.protocol.admin.topics"),
    (42, "DeleteGroups", None),
    (43, "ElectLeaders", "kafka.protocol.admin.topics"),
    (44, "IncrementalAlterConfigs", "kafka.protocol.admin.configs"),
    (45, "AlterPartitionReassignments", "kafka.protocol.admin.topics"),
    (46, "ListPartitionReassignments", "kafka.protocol.admin.topics"),
    (47, "OffsetDelete", "kafka.protocol.consumer.group"),
    (50, "DescribeUserScramCredentials", "kafka.protocol.admin.users"),
    (51, "AlterUserScramCredentials", "kafka.protocol.admin.users"),
    (57, "UpdateFeatures", "kafka.protocol.admin.cluster"),
    (60, "DescribeCluster", "kafka.protocol.admin.cluster"),
    (61, "DescribeProducers", "kafka.protocol.admin.transactions"),
    (65, "DescribeTransactions", "kafka.protocol.admin.transactions"),
    (66, "ListTransactions", "kafka.protocol.admin.transactions"),
    (68, "ConsumerGroupHeartbeat", None),
    (69, "ConsumerGroupDescribe", None),
    (74, "ListConfigResources", "kafka.protocol.admin.configs"),
    (75, "DescribeTopicPartitions", "kafka.protocol.admin.topics"),
    (76, "ShareGroupHeartbeat", None),
    (77, "ShareGroupDescribe", None),
    (78, "ShareFetch", None),
    (79, "ShareAcknowledge", None),
    (88, "StreamsGroupHeartbeat", None),
    (89, "StreamsGroupDescribe", None),
    (90, "DescribeShareGroupOffsets", None),
    (91, "AlterShareGroupOffsets", None),
    (92, "DeleteShareGroupOffsets", None),
):
    API_NAMES[_key] = _name
    _KAFKA_MODULES[f"{_name}Request"] = _KAFKA_MODULES[f"{_name}Response"] = _module

# The classes this module defines from schemas/, by name: their docstrings.
_OWN_CLASSES = {
    "ProduceRequest": "ProduceRequest 3-14; v14 is v13 again (KIP-1269).",
    "ProduceResponse": "ProduceResponse 3-14; v14 adds tag 1 ProducerStateBatchesToRetain per partition.",
    "DeleteGroupsRequest": "DeleteGroupsRequest 0-3 (Kafka's definition; the bundled one stops at 2).",
    "DeleteGroupsResponse": "DeleteGroupsResponse 0-3; v3 adds a per-group ErrorMessage.",
    "ShareGroupHeartbeatRequest": "ShareGroupHeartbeatRequest 1 (KIP-932; v0 was Kafka 4.0's early access, removed "
                                  "in 4.1).",
    "ShareGroupHeartbeatResponse": "ShareGroupHeartbeatResponse 1.",
    "ShareGroupDescribeRequest": "ShareGroupDescribeRequest 1 (KIP-932).",
    "ShareGroupDescribeResponse": "ShareGroupDescribeResponse 1.",
    "ShareFetchRequest": "ShareFetchRequest 1-2; v2 adds ShareAcquireMode and IsRenewAck (KIP-1206, KIP-1222).",
    "ShareFetchResponse": "ShareFetchResponse 1-2.",
    "ShareAcknowledgeRequest": "ShareAcknowledgeRequest 1-2; v2 adds IsRenewAck (KIP-1222).",
    "ShareAcknowledgeResponse": "ShareAcknowledgeResponse 1-2; v2 adds AcquisitionLockTimeoutMs.",
    "DescribeShareGroupOffsetsRequest": "DescribeShareGroupOffsetsRequest 0-1 (KIP-932; Kafka 4.3.1's definition).",
    "DescribeShareGroupOffsetsResponse": "DescribeShareGroupOffsetsResponse 0-1; v1 adds Lag (KIP-1226).",
    "AlterShareGroupOffsetsRequest": "AlterShareGroupOffsetsRequest 0 (KIP-932).",
    "AlterShareGroupOffsetsResponse": "AlterShareGroupOffsetsResponse 0.",
    "DeleteShareGroupOffsetsRequest": "DeleteShareGroupOffsetsRequest 0 (KIP-932).",
    "DeleteShareGroupOffsetsResponse": "DeleteShareGroupOffsetsResponse 0.",
    "ConsumerGroupHeartbeatRequest": "ConsumerGroupHeartbeatRequest 0-1 (KIP-848; not bundled with kafka-python).",
    "ConsumerGroupHeartbeatResponse": "ConsumerGroupHeartbeatResponse 0-1.",
    "ConsumerGroupDescribeRequest": "ConsumerGroupDescribeRequest 0-1 (KIP-848).",
    "ConsumerGroupDescribeResponse": "ConsumerGroupDescribeResponse 0-1; v1 adds MemberType.",
    "StreamsGroupHeartbeatRequest": "StreamsGroupHeartbeatRequest 0 (KIP-1071; not bundled with kafka-python).",
    "StreamsGroupHeartbeatResponse": "StreamsGroupHeartbeatResponse 0.",
    "StreamsGroupDescribeRequest": "StreamsGroupDescribeRequest 0 (KIP-1071).",
    "StreamsGroupDescribeResponse": "StreamsGroupDescribeResponse 0.",
}


class _RecordsInFrame(Bytes):
    """The `records` type read as a view into the request frame instead of a copy of it.

    kafka-python's reader copies every bytes field (`bytes(data[pos:pos + n])`); a Produce
    request's batches would be copied there and again into the log. Read as a view, a batch
    is copied once, when the log appends it (Cluster.append), and a refused one never. The
    view is valid while the frame is: Produce is handled before the connection reads again.
    """

    @classmethod
    def emit_decode_from(cls, ctx: Any, var_name: str, indent: str, compact: bool = False) -> None:
        length = ctx.next_var("ln")
        if compact:
            UnsignedVarInt32.emit_decode_from(ctx, length, indent)
            ctx.emit(indent, f"{length} -= 1")
        else:
            ctx.emit(indent, f'{length} = unpack_from(">i", data, pos)[0]')
            ctx.emit(indent, "pos += 4")
        ctx.emit(indent, f"{var_name} = None if {length} < 0 else data[pos:pos + {length}]")
        ctx.emit(indent, f"pos += max({length}, 0)")


def _produce_expects_response(self: Any) -> bool:
    return bool(self.acks != 0)


def _own_class(name: str) -> Any:
    """A message class from its definition in schemas/."""
    namespace: dict[str, Any] = {"__module__": __name__, "__doc__": _OWN_CLASSES[name]}
    if name == "ProduceRequest":
        namespace["expect_response"] = _produce_expects_response
    cls: Any = types.new_class(name, (ApiMessage,), {"load_json": _schemas}, lambda body: body.update(namespace))
    if name == "ProduceRequest":
        records = cls._struct.fields["topic_data"].fields["partition_data"].fields["records"]
        records._type = _RecordsInFrame  # before the first decode compiles the reader
    return cls


def _kafka_class(name: str, module_name: str) -> Any:
    """kafka-python's message class, from its module (another kafka-python 3 release may keep it elsewhere in the
    module's package, or not define it: then it is made from the definition kafka-python bundles)."""
    for where in (module_name, module_name.rpartition(".")[0]):
        try:
            found = getattr(importlib.import_module(where), name, None)
        except ModuleNotFoundError:  # pragma: no cover - depends on the pinned kafka-python
            found = None
        if found is not None:
            return found
    return types.new_class(name, (ApiMessage,), {}, lambda body: body.update({"__module__": __name__}))


_creating = threading.RLock()  # two threads asking for one class get one class


def _message_class(name: str) -> Any:
    """The message class `name`, created on its first use."""
    if name not in _KAFKA_MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with _creating:
        cls = globals().get(name)
        if cls is None:
            module_name = _KAFKA_MODULES[name]
            with quiet_schema_loading():
                cls = _own_class(name) if module_name is None else _kafka_class(name, module_name)
            globals()[name] = cls
    return cls


if not TYPE_CHECKING:  # for mypy the names are those imported and declared above, each its own type
    __getattr__ = _message_class  # PEP 562: called for the names not yet in the module


# Request or Response classes by API key, each created on first lookup
REQUESTS: Mapping[int, Any] = LoadedOnFirstUse(API_NAMES, lambda key: _message_class(API_NAMES[key] + "Request"))
RESPONSES: Mapping[int, Any] = LoadedOnFirstUse(API_NAMES, lambda key: _message_class(API_NAMES[key] + "Response"))


def quick_data(cls: Any, **fields: Any) -> Any:
    """`cls(**fields)` for a kafka-python message or struct, without the constructor's walk over every field
    of the schema (2 µs per object; each Produce answer needs three). Untagged fields only: the others read
    as their defaults, as after the constructor. tests/unit/test_produce_response.py compares the two."""
    data = object.__new__(cls)
    data._version = data.tags = data.unknown_tags = None
    if isinstance(data, ApiMessage):
        data._header = data._min_version = data._max_version = None
    for name, value in fields.items():
        setattr(data, name, value)
    return data


# --- reading a request body as Kafka's generated readers do -------------------------------------

_MAX_STRING_LENGTH = 0x7FFF  # a string's length is an int16 on the wire; compact lengths must stay below it
_BYTE_TYPES = ("string", "bytes", "records")


class MalformedRequest(ValueError):
    """A request body Kafka's generated reader (`<Name>RequestData.read`) would throw on."""


def api_name(api_key: int) -> str:
    """The API's name as Kafka's `ApiKeys` enum spells it (PRODUCE, DESCRIBE_LOG_DIRS, ...)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", API_NAMES[api_key]).upper()


def request_parse_error(api_key: int, api_version: int, cause: str) -> str:
    """The text Kafka's `RequestContext.parseRequest` gives a request it cannot read, with the cause."""
    return f"Error getting request for apiKey: {api_name(api_key)}, apiVersion: {api_version}: {cause}"


def decode_request(api_key: int, api_version: int, body: Any) -> Any:
    """Decode a request body; MalformedRequest where Kafka's reader throws, nulls in non-nullable fields included.

    kafka-python's engine reads a -1 length as None whatever the schema says; Kafka's
    generated readers throw "non-nullable field X was serialized as null" instead, and the
    broker closes the connection (SocketServer). The check is driven by each field's
    `nullableVersions` in the JSON definition, so it covers every API in one place.
    """
    try:
        read, checks = _reader(api_key, api_version)
        request, _end = read(memoryview(body), 0)
    except Exception as exc:  # the engine raises assorted errors on malformed bodies
        raise MalformedRequest(f"{type(exc).__name__}: {exc}") from exc
    _check_fields(request, checks)
    return request


@functools.lru_cache(maxsize=1024)  # bounded: the version may be the client's
def _reader(api_key: int, api_version: int) -> tuple[Any, tuple[_Check, ...]]:
    """The engine's compiled reader of a request body at this version (what ApiMessage.decode calls after
    checking the version each time) and the null checks of its fields."""
    request_class = REQUESTS[api_key]
    if not 0 <= api_version <= request_class.max_version:
        raise ValueError(f"Invalid version {api_version} (max version is {request_class.max_version}).")
    flexible = request_class.flexible_version_q(api_version)
    read = request_class._struct.compiled_decode_from(api_version, compact=flexible, tagged=flexible,
                                                      data_class=request_class[None])
    return read, _read_checks(request_class, api_version)


# One check per field that may hold what Kafka's reader refuses: (attribute, Kafka's field name, kind,
# nullable, nested checks). Kinds: a string/bytes value, an array of them, an array of other
# primitives, a struct, an array of structs.
_VALUE, _VALUE_ARRAY, _ARRAY, _STRUCT, _STRUCT_ARRAY = range(5)
_Check = tuple[str, str, int, bool, tuple[Any, ...]]


def _in_versions(spec: str | None, version: int) -> bool:
    if spec is None or spec.strip() in ("", "none"):
        return False
    spec = spec.strip()
    if spec.endswith("+"):
        return version >= int(spec[:-1])
    low, _, high = spec.partition("-")
    return int(low) <= version <= int(high or low)


@functools.cache
def _read_checks(request_class: Any, version: int) -> tuple[_Check, ...]:
    flexible = bool(request_class.flexible_version_q(version))
    return _field_checks(request_class.json["fields"], version, flexible)


def _field_checks(fields: list[dict[str, Any]], version: int, flexible: bool) -> tuple[_Check, ...]:
    checks: list[_Check] = []
    for field in fields:
        if not _in_versions(field.get("versions"), version):
            continue
        json_name: str = field["name"]
        attr = re.sub(r"(?<!^)(?=[A-Z])", "_", json_name).lower()  # the engine's attribute name
        kafka_name = json_name[0].lower() + json_name[1:]  # the Java field name in Kafka's messages
        nullable = _in_versions(field.get("nullableVersions"), version)
        type_str: str = field["type"]
        inner = type_str.removeprefix("[]")
        if "fields" in field:
            nested = _field_checks(field["fields"], version, flexible)
            if type_str.startswith("[]"):
                if not nullable or nested:
                    checks.append((attr, kafka_name, _STRUCT_ARRAY, nullable, nested))
            elif nested:  # a struct is None only where the engine allows it (nullable, or an absent tag)
                checks.append((attr, kafka_name, _STRUCT, True, nested))
        elif type_str.startswith("[]"):
            if inner in _BYTE_TYPES:  # elements of a string array are never nullable
                checks.append((attr, kafka_name, _VALUE_ARRAY, nullable, (inner == "string" and flexible,)))
            elif not nullable:
                checks.append((attr, kafka_name, _ARRAY, nullable, ()))
        elif type_str in _BYTE_TYPES:
            long_possible = type_str == "string" and flexible
            if not nullable or long_possible:
                checks.append((attr, kafka_name, _VALUE, nullable, (long_possible,)))
    return tuple(checks)


def _check_string_length(value: str, kafka_name: str, what: str) -> None:
    # only a compact (varint) length can exceed an int16; most strings are far shorter than the bound
    if len(value) > _MAX_STRING_LENGTH // 4:
        length = len(value.encode())
        if length > _MAX_STRING_LENGTH:
            raise MalformedRequest(f"string field {kafka_name}{what} had invalid length {length}")


def _check_fields(message: Any, checks: tuple[_Check, ...]) -> None:
    for attr, kafka_name, kind, nullable, nested in checks:
        value = getattr(message, attr)
        if value is None:
            if not nullable:
                raise MalformedRequest(f"non-nullable field {kafka_name} was serialized as null")
            continue
        if kind == _VALUE:
            if nested[0]:
                _check_string_length(value, kafka_name, "")
        elif kind == _VALUE_ARRAY:
            for element in value:
                if element is None:
                    raise MalformedRequest(f"non-nullable field {kafka_name} element was serialized as null")
                if nested[0]:
                    _check_string_length(element, kafka_name, " element")
        elif kind == _STRUCT:
            _check_fields(value, nested)
        elif kind == _STRUCT_ARRAY:
            for element in value:
                _check_fields(element, nested)
