"""Message classes for every API the broker speaks.

kafka-python's schema engine compiles Kafka's JSON definitions; it bundles
Kafka's files, and `schemas/` (installed as `minibroker.schemas`) adds the ones
we extend, such as Produce v14 for KIP-1269. `decode_request` reads a request
body as Kafka's generated readers do, refusing a null where the definition
allows none.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

from kafka.protocol.admin import (
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
from kafka.protocol.admin.groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
)
from kafka.protocol.admin.transactions import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from kafka.protocol.admin.users import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
)
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafka.protocol.consumer.group import (
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
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse
from kafka.protocol.producer import (
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
from kafka.protocol.sasl import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from kafka.protocol.schemas.fields.codecs import Bytes, UnsignedVarInt32

from . import quiet_schema_loading


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

with quiet_schema_loading():  # read_text is deprecated; see quiet_schema_loading

    class ProduceRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ProduceRequest 3-14; v14 is v13 again (KIP-1269)."""

        def expect_response(self) -> bool:
            return bool(self.acks != 0)

    class ProduceResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ProduceResponse 3-14; v14 adds tag 1 ProducerStateBatchesToRetain per partition."""

    class DeleteGroupsRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """DeleteGroupsRequest 0-3 (Kafka's definition; the bundled one stops at 2)."""

    class DeleteGroupsResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """DeleteGroupsResponse 0-3; v3 adds a per-group ErrorMessage."""

    class ShareGroupHeartbeatRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ShareGroupHeartbeatRequest 1 (KIP-932; v0 was Kafka 4.0's early access, removed in 4.1)."""

    class ShareGroupHeartbeatResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ShareGroupHeartbeatResponse 1."""

    class ShareGroupDescribeRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ShareGroupDescribeRequest 1 (KIP-932)."""

    class ShareGroupDescribeResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ShareGroupDescribeResponse 1."""

    class ShareFetchRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ShareFetchRequest 1-2; v2 adds ShareAcquireMode and IsRenewAck (KIP-1206, KIP-1222)."""

    class ShareFetchResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ShareFetchResponse 1-2."""

    class ShareAcknowledgeRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ShareAcknowledgeRequest 1-2; v2 adds IsRenewAck (KIP-1222)."""

    class ShareAcknowledgeResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ShareAcknowledgeResponse 1-2; v2 adds AcquisitionLockTimeoutMs."""

    class DescribeShareGroupOffsetsRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """DescribeShareGroupOffsetsRequest 0-1 (KIP-932; Kafka 4.3.1's definition)."""

    class DescribeShareGroupOffsetsResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """DescribeShareGroupOffsetsResponse 0-1; v1 adds Lag (KIP-1226)."""

    class AlterShareGroupOffsetsRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """AlterShareGroupOffsetsRequest 0 (KIP-932)."""

    class AlterShareGroupOffsetsResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """AlterShareGroupOffsetsResponse 0."""

    class DeleteShareGroupOffsetsRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """DeleteShareGroupOffsetsRequest 0 (KIP-932)."""

    class DeleteShareGroupOffsetsResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """DeleteShareGroupOffsetsResponse 0."""

    class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ConsumerGroupHeartbeatRequest 0-1 (KIP-848; not bundled with kafka-python)."""

    class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ConsumerGroupHeartbeatResponse 0-1."""

    class ConsumerGroupDescribeRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ConsumerGroupDescribeRequest 0-1 (KIP-848)."""

    class ConsumerGroupDescribeResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """ConsumerGroupDescribeResponse 0-1; v1 adds MemberType."""

    class StreamsGroupHeartbeatRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """StreamsGroupHeartbeatRequest 0 (KIP-1071; not bundled with kafka-python)."""

    class StreamsGroupHeartbeatResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """StreamsGroupHeartbeatResponse 0."""

    class StreamsGroupDescribeRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """StreamsGroupDescribeRequest 0 (KIP-1071)."""

    class StreamsGroupDescribeResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
        """StreamsGroupDescribeResponse 0."""


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


_ProduceRecordsField = ProduceRequest._struct.fields["topic_data"].fields["partition_data"].fields["records"]
_ProduceRecordsField._type = _RecordsInFrame  # before the first decode compiles the reader


try:  # DescribeTopicPartitions lives in different modules across kafka-python releases
    from kafka.protocol.admin import (  # type: ignore[attr-defined]
        DescribeTopicPartitionsRequest,
        DescribeTopicPartitionsResponse,
    )
except ImportError:  # pragma: no cover - depends on the pinned kafka-python

    class DescribeTopicPartitionsRequest(ApiMessage):  # type: ignore[no-redef]
        """DescribeTopicPartitionsRequest 0."""

    class DescribeTopicPartitionsResponse(ApiMessage):  # type: ignore[no-redef]
        """DescribeTopicPartitionsResponse 0."""


MESSAGE_PAIRS: list[tuple[Any, Any]] = [
    (ProduceRequest, ProduceResponse),
    (FetchRequest, FetchResponse),
    (ListOffsetsRequest, ListOffsetsResponse),
    (MetadataRequest, MetadataResponse),
    (OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse),
    (ApiVersionsRequest, ApiVersionsResponse),
    (CreateTopicsRequest, CreateTopicsResponse),
    (DeleteTopicsRequest, DeleteTopicsResponse),
    (DeleteRecordsRequest, DeleteRecordsResponse),
    (InitProducerIdRequest, InitProducerIdResponse),
    (DescribeConfigsRequest, DescribeConfigsResponse),
    (AlterConfigsRequest, AlterConfigsResponse),
    (CreatePartitionsRequest, CreatePartitionsResponse),
    (IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse),
    (DescribeClusterRequest, DescribeClusterResponse),
    (DescribeProducersRequest, DescribeProducersResponse),
    (DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse),
    (FindCoordinatorRequest, FindCoordinatorResponse),
    (JoinGroupRequest, JoinGroupResponse),
    (SyncGroupRequest, SyncGroupResponse),
    (HeartbeatRequest, HeartbeatResponse),
    (LeaveGroupRequest, LeaveGroupResponse),
    (OffsetCommitRequest, OffsetCommitResponse),
    (OffsetFetchRequest, OffsetFetchResponse),
    (DescribeGroupsRequest, DescribeGroupsResponse),
    (ListGroupsRequest, ListGroupsResponse),
    (DeleteGroupsRequest, DeleteGroupsResponse),
    (OffsetDeleteRequest, OffsetDeleteResponse),
    (AddPartitionsToTxnRequest, AddPartitionsToTxnResponse),
    (AddOffsetsToTxnRequest, AddOffsetsToTxnResponse),
    (EndTxnRequest, EndTxnResponse),
    (TxnOffsetCommitRequest, TxnOffsetCommitResponse),
    (DescribeTransactionsRequest, DescribeTransactionsResponse),
    (ListTransactionsRequest, ListTransactionsResponse),
    (ElectLeadersRequest, ElectLeadersResponse),
    (AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse),
    (ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse),
    (AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse),
    (DescribeLogDirsRequest, DescribeLogDirsResponse),
    (DescribeAclsRequest, DescribeAclsResponse),
    (CreateAclsRequest, CreateAclsResponse),
    (DeleteAclsRequest, DeleteAclsResponse),
    (SaslHandshakeRequest, SaslHandshakeResponse),
    (SaslAuthenticateRequest, SaslAuthenticateResponse),
    (DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse),
    (AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse),
    (ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse),
    (ShareGroupDescribeRequest, ShareGroupDescribeResponse),
    (ShareFetchRequest, ShareFetchResponse),
    (ShareAcknowledgeRequest, ShareAcknowledgeResponse),
    (DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse),
    (AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse),
    (DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse),
    (ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse),
    (ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse),
    (StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse),
    (StreamsGroupDescribeRequest, StreamsGroupDescribeResponse),
    (ListConfigResourcesRequest, ListConfigResourcesResponse),
    (UpdateFeaturesRequest, UpdateFeaturesResponse),
]

REQUESTS: dict[int, Any] = {req.API_KEY: req for req, _ in MESSAGE_PAIRS}
RESPONSES: dict[int, Any] = {resp.API_KEY: resp for _, resp in MESSAGE_PAIRS}


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
    name = REQUESTS[api_key].__name__.removesuffix("Request")
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


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
