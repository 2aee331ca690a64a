"""Request headers as Kafka's RequestHeader reads them: v1 (client id) and v2 (client id, tagged fields)."""

from __future__ import annotations

import struct

import pytest

from minibroker.apis.context import CloseConnection
from minibroker.apis.dispatch import parse_header


def header(api_key: int, version: int, client_id: bytes | None, tagged: bytes = b"") -> memoryview:
    client = struct.pack(">h", -1) if client_id is None else struct.pack(">h", len(client_id)) + client_id
    return memoryview(struct.pack(">hhi", api_key, version, 42) + client + tagged + b"BODY")


def test_a_flexible_header_without_tagged_fields_ends_after_its_count() -> None:
    frame = header(0, 9, b"producer-1", b"\x00")
    parsed = parse_header(frame)
    assert (parsed.api_key, parsed.api_version, parsed.correlation_id, parsed.client_id) == (0, 9, 42, "producer-1")
    assert bytes(frame[parsed.body_offset:]) == b"BODY"


def test_tagged_fields_of_a_flexible_header_are_skipped() -> None:
    frame = header(0, 9, None, b"\x02" + b"\x00\x03abc" + b"\x05\x01z")
    parsed = parse_header(frame)
    assert parsed.client_id is None and bytes(frame[parsed.body_offset:]) == b"BODY"


def test_a_header_before_flexible_versions_has_no_tagged_fields() -> None:
    frame = header(0, 8, "prod\u00fcr".encode())
    parsed = parse_header(frame)
    assert parsed.client_id == "prod\u00fcr" and bytes(frame[parsed.body_offset:]) == b"BODY"


def test_a_client_id_that_is_not_utf8_is_read_with_replacement_characters() -> None:
    assert parse_header(header(0, 8, b"a\xffb")).client_id == "a\ufffdb"


@pytest.mark.parametrize("tagged", [b"\x01\x00\x09abc", b"\x01\x80"])
def test_tagged_fields_running_past_the_frame_close_the_connection(tagged: bytes) -> None:
    frame = memoryview(bytes(header(0, 9, b"c", tagged))[:-4])  # no body after the broken tagged fields
    with pytest.raises(CloseConnection):
        parse_header(frame)



def test_an_api_versions_request_above_every_version_reads_a_v2_header_as_kafka_does() -> None:
    # Kafka picks the header version from the request version alone (v3 and later: v2), known or not, so an
    # ApiVersions v99 whose header has no tagged-field section is cut short and the connection is closed.
    frame = header(18, 99, b"c", b"\x00")
    assert bytes(frame[parse_header(frame).body_offset:]) == b"BODY"
    with pytest.raises(CloseConnection):
        parse_header(memoryview(bytes(header(18, 99, b"c"))[:-4]))
