"""From one request frame to one response frame, without any I/O.

The server hands each frame (without its 4-byte size) to `handle_frame` and
gets back what to do: send bytes, send nothing, wait for a pending answer,
or close the connection the way Kafka does.
"""

from __future__ import annotations

import functools
import logging
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.cluster import Cluster
from ..core.cluster_model import Node
from ..core.pending import Pending
from ..protocol.errors import KafkaError
from ..protocol.messages import REQUESTS, RESPONSES, MalformedRequest, decode_request, request_parse_error
from ..protocol.stored_batches import encode_with_stored_batches
from . import API_DECLARATIONS, API_MODULES, accepted_versions, api_versions
from .context import CloseConnection, RequestContext, Session

log = logging.getLogger("minibroker.requests")

_HEADER_FIXED = struct.Struct(">hhih")


@dataclass(slots=True)
class RequestHeader:
    """The fields of request header v1/v2 that matter to the broker."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body_offset: int


def _read_uvarint(frame: memoryview, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if pos >= len(frame):
            raise CloseConnection("truncated tagged fields in request header")
        byte = frame[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 28:
            raise CloseConnection("malformed varint in request header")


def parse_header(frame: memoryview) -> RequestHeader:
    """Decode the request header; CloseConnection for unknown APIs or malformed bytes."""
    if len(frame) < _HEADER_FIXED.size:
        raise CloseConnection("request shorter than its header")
    api_key, api_version, correlation_id, client_len = _HEADER_FIXED.unpack_from(frame, 0)
    pos = _HEADER_FIXED.size
    client_id = None
    if client_len >= 0:
        if pos + client_len > len(frame):
            raise CloseConnection("client id runs past the end of the request")
        client_id = str(frame[pos : pos + client_len], "utf-8", "replace")
        pos += client_len
    if api_key not in API_MODULES:
        raise CloseConnection(f"Error parsing request header. Our best guess of the apiKeyId is: {api_key}")
    if _flexible_request(api_key, api_version):
        pos = _skip_tagged_fields(frame, pos)
    return RequestHeader(api_key, api_version, correlation_id, client_id, pos)


def _skip_tagged_fields(frame: memoryview, pos: int) -> int:
    """Where a request header's tagged-field section starting at `pos` ends (the broker reads none of them)."""
    if pos < len(frame) and frame[pos] == 0:
        return pos + 1  # none, as clients send it
    count, pos = _read_uvarint(frame, pos)
    for _ in range(count):
        _tag, pos = _read_uvarint(frame, pos)
        size, pos = _read_uvarint(frame, pos)
        pos += size
    if pos > len(frame):
        raise CloseConnection("tagged fields run past the end of the request header")
    return pos


@functools.lru_cache(maxsize=1024)  # bounded: the version is the client's, not checked yet
def _flexible_request(api_key: int, api_version: int) -> bool:
    """Whether the request header at this version carries tagged fields (header v2)."""
    # From the version alone, as Kafka's ApiKeys.requestHeaderVersion: a version above every known one is read
    # with a v2 header too (an ApiVersions v99 without its header's tagged fields is cut short and closed).
    return bool(api_version >= 0 and REQUESTS[api_key].flexible_version_q(api_version))


@functools.lru_cache(maxsize=1024)
def _response_writing(api_key: int, version: int) -> tuple[bool, bool, Any, Any]:
    """How a response is written: whether its header is flexible (never for ApiVersions, KIP-511), whether its
    body is, the module's `stored_batch_holders` and its `encode_body` (or None)."""
    flexible_body = bool(RESPONSES[api_key].flexible_version_q(version))
    declaration = API_DECLARATIONS[api_key]
    return (flexible_body and api_key != api_versions.API_KEY, flexible_body,
            declaration.stored_batch_holders, declaration.encode_body)


def encode_response(header: RequestHeader, response: Any, version: int | None = None) -> Answer:
    """Frame a response: size, correlation id, header tagged fields when flexible, body.

    A response carrying stored record batches (an API module with `stored_batch_holders`, i.e. Fetch)
    comes back as buffers, its batches not copied (protocol/stored_batches.py). An API module with
    `encode_body(response, version)` writes its common answers itself (Produce); None hands the
    answer to the engine.
    """
    version = header.api_version if version is None else version
    flexible, flexible_body, holders, fast_encode = _response_writing(header.api_key, version)
    if holders is not None:
        parts = encode_with_stored_batches(response, version, flexible_body, holders(response))
        if len(parts) > 1:
            size = sum(len(part) for part in parts) + (5 if flexible else 4)
            return [struct.pack(">ii", size, header.correlation_id) + (b"\x00" if flexible else b""), *parts]
        body = parts[0]
    elif fast_encode is None or (body := fast_encode(response, version)) is None:
        body = response.encode(version=version)
    head = struct.pack(">ii", len(body) + (5 if flexible else 4), header.correlation_id)
    return head + (b"\x00" if flexible else b"") + bytes(body)


# A response frame: bytes, or buffers written back to back (a Fetch answer's stored batches are sent
# as they are, never joined)
Answer = bytes | list[bytes | bytearray | memoryview]


@dataclass(slots=True)
class Reply:
    """Send these bytes."""

    data: Answer


@dataclass(slots=True)
class NoReply:
    """Send nothing (acks=0 produce)."""


@dataclass(slots=True)
class Deferred:
    """Wait for `pending`, then send `encode(pending.result())`."""

    pending: Pending
    encode: Callable[[Any], Answer | None]


Outcome = Reply | NoReply | Deferred

_NO_SESSION = Session()


# Test control's hook: (api key, version, request) -> (an answer to send instead, or None; a hook on the answer)
Adjust = Callable[[int, int, Any], tuple[Any, Callable[[Any], None] | None]]


def decode_frame(frame: memoryview) -> tuple[RequestHeader, Any]:
    """A request frame's header and body, decoded as `handle_frame` decodes them (CloseConnection, MalformedRequest).

    The server's request hook (test control) decodes with this when it must see a request on arrival, and hands
    the body back to `handle_frame` as `decoded`, so no request is decoded twice.
    """
    header = parse_header(frame)
    return header, decode_request(header.api_key, header.api_version, frame[header.body_offset:])


def handle_frame(frame: memoryview, cluster: Cluster, node: Node, session: Session | None = None,
                 adjust: Adjust | None = None, frame_owned: bool = False, decoded: Any = None) -> Outcome:
    """Handle one request frame; CloseConnection when Kafka would drop the connection.

    `adjust` lets test control (minibroker/testing/control.py) answer instead, or change the answer.
    `frame_owned`: the frame's memory is this request's alone (the connection's `Request.owned`), so
    the log may keep what it stores of it without a copy; otherwise it is only valid during the call.
    `decoded`: the body as `decode_frame` decoded it from this frame already (by the request hook), or None.
    """
    header = parse_header(frame)
    module = API_MODULES[header.api_key]
    accepted = accepted_versions(node.release).get(header.api_key)
    if accepted is None:
        # the release this node speaks as did not have this API
        raise CloseConnection(f"Error parsing request header. Our best guess of the apiKeyId is: {header.api_key}")
    if not accepted[0] <= header.api_version <= accepted[1]:
        if header.api_key == api_versions.API_KEY:
            return Reply(encode_response(header, api_versions.unsupported_version_response(node.release), version=0))
        raise CloseConnection(
            f"Received request api key {header.api_key} with version {header.api_version} which is not enabled"
        )
    try:
        request = decoded if decoded is not None else decode_request(header.api_key, header.api_version,
                                                                      frame[header.body_offset :])
    except MalformedRequest as exc:
        # Kafka's SocketServer closes the connection when RequestContext.parseRequest throws
        raise CloseConnection(request_parse_error(header.api_key, header.api_version, str(exc))) from exc
    session = session or _NO_SESSION
    ctx = RequestContext(cluster, node, header.api_key, header.api_version, header.correlation_id, header.client_id,
                         session.client_host, session.listener, session.principal, frame_owned)
    finish = None
    if adjust is not None:
        replacement, finish = adjust(header.api_key, header.api_version, request)
        if replacement is not None:
            return Reply(encode_response(header, replacement))
    try:
        result = module.handle(request, ctx)
    except KafkaError as exc:
        if exc.code.name == "INVALID_REQUEST":
            raise CloseConnection(exc.message or "invalid request") from exc
        raise
    if finish is not None and not isinstance(result, Pending):
        finish(result)
    if result is None:
        return NoReply()
    if isinstance(result, Pending):
        return Deferred(result, lambda response: None if response is None else encode_response(header, response))
    return Reply(encode_response(header, result))
