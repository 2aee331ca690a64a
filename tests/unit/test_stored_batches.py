"""A Fetch answer sent as buffers (protocol/stored_batches.py) is byte for byte what the engine encodes."""

from __future__ import annotations

import uuid

import pytest

from minibroker.apis import fetch
from minibroker.apis.dispatch import RequestHeader, encode_response
from minibroker.protocol import records
from minibroker.protocol.messages import FetchResponse
from minibroker.protocol.stored_batches import StoredBatches

_Topic = FetchResponse.FetchableTopicResponse
_Partition = _Topic.PartitionData


def batch(offset: int, size: int) -> bytearray:
    data = bytearray(records.build_batch([(None, b"v" * size)], timestamp=1_700_000_000_000))
    records.patch_base_offset(data, offset, 0)
    return data


def response(version: int, stored: list[list[bytearray]]) -> FetchResponse:
    partitions = [
        _Partition(partition_index=index, error_code=0, high_watermark=9, last_stable_offset=9, log_start_offset=0,
                   aborted_transactions=None, preferred_read_replica=-1,
                   records=StoredBatches(batches) if batches else b"")
        for index, batches in enumerate(stored)
    ]
    topics = [_Topic(topic_id=uuid.UUID(int=1), partitions=partitions[:2]), _Topic(topic_id=uuid.UUID(int=2),
                                                                                 partitions=partitions[2:])]
    if version < 13:
        topics = [_Topic(topic="a", partitions=partitions[:2]), _Topic(topic="b", partitions=partitions[2:])]
    return FetchResponse(throttle_time_ms=0, error_code=0, session_id=0, responses=topics, node_endpoints=[])


def joined_copy(answer: FetchResponse) -> FetchResponse:
    for holder in fetch.stored_batch_holders(answer):
        holder.records = bytes(holder.records)
    return answer


@pytest.mark.parametrize("version", [4, 11, 12, 13, 16, 17, 18])
def test_spliced_answer_equals_the_engines_encoding(version: int) -> None:
    stored = [[batch(0, 10), batch(1, 300)], [], [batch(5, 200_000)], [batch(9, 1)]]
    header = RequestHeader(fetch.API_KEY, version, 77, "c", 0)
    spliced = encode_response(header, response(version, stored))
    plain = encode_response(header, joined_copy(response(version, stored)))
    assert isinstance(spliced, list) and isinstance(plain, bytes)
    assert b"".join(spliced) == plain


def test_the_stored_batches_themselves_are_sent() -> None:
    stored = [[batch(0, 1000)], [batch(1, 1000), batch(2, 10)], [], []]
    parts = encode_response(RequestHeader(fetch.API_KEY, 16, 1, None, 0), response(16, stored))
    assert isinstance(parts, list)
    sent = {id(part) for part in parts}
    assert all(id(b) in sent for batches in stored for b in batches)


def test_an_answer_without_batches_is_one_buffer() -> None:
    answer = encode_response(RequestHeader(fetch.API_KEY, 16, 1, None, 0), response(16, [[], [], [], []]))
    assert isinstance(answer, bytes)
