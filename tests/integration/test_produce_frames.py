"""A produced batch reaches the log with one copy at most, whichever way its frame arrives (real sockets).

A frame that arrives whole lies in the broker's shared read buffer, so its batch is copied into the
log; a frame assembled over several reads already has a buffer of its own, which the log keeps
as it is. Either way every record reads back as sent, however much traffic follows.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from minibroker.protocol import records
from minibroker.protocol.messages import FetchRequest, ProduceRequest
from minibroker.testing import BrokerThread
from minibroker.testing.wire import WireClient
from tests.helpers import pinned_bytes

VERSION = 9
BIG = 600 * 1024  # more than the 256 KB read buffer: the frame needs several reads


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerThread]:
    with BrokerThread(config={"message.max.bytes": str(2 * BIG)}) as running:
        yield running


def produce(topic: str, values: list[bytes]) -> ProduceRequest:
    batch = records.build_batch([(None, value) for value in values], timestamp=int(time.time() * 1000))
    return ProduceRequest(transactional_id=None, acks=1, timeout_ms=30000, topic_data=[
        ProduceRequest.TopicProduceData(name=topic, partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=batch)])])


def answered(client: WireClient, count: int) -> list[Any]:
    answers = [WireClient.decode_response(client.read_frame(), 0, VERSION)[1] for _ in range(count)]
    return [a.responses[0].partition_responses[0] for a in answers]


def read_back(client: WireClient, topic: str) -> list[bytes | None]:
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=64 << 20, isolation_level=0,
                           topics=[FetchRequest.FetchTopic(topic=topic, partitions=[
                               FetchRequest.FetchTopic.FetchPartition(partition=0, fetch_offset=0,
                                                                      partition_max_bytes=64 << 20)])])
    data = client.request(request, 11).responses[0].partitions[0].records
    return [record.value for start, end in records.split_batches(data)
            for record in records.iter_records(memoryview(data)[start:end])]


def test_batches_from_whole_split_and_large_frames_read_back_intact_after_more_traffic(broker: BrokerThread) -> None:
    topic = broker.create_topic("frames", 1)
    large = [pinned_bytes(BIG, seed=1)]
    split = [b"split-%d" % i for i in range(50)]
    whole = [[b"whole-%d-%d" % (n, i) for i in range(20)] for n in range(40)]
    with WireClient(broker.host, broker.port) as client:
        client.send_raw(client.encode_request(produce(topic, large), VERSION))
        frame = client.encode_request(produce(topic, split), VERSION)
        client.send_raw(frame[:100])
        time.sleep(0.2)  # the broker reads the first part on its own
        client.send_raw(frame[100:])
        # 40 requests sent as one burst: they arrive whole in the broker's read buffer, which each later read reuses
        client.send_raw(b"".join(client.encode_request(produce(topic, values), VERSION) for values in whole))
        assert [(p.error_code, p.base_offset) for p in answered(client, 42)] == \
            [(0, 0), (0, 1)] + [(0, 51 + 20 * n) for n in range(40)]
        assert read_back(client, topic) == large + split + [value for values in whole for value in values]
    stored = broker.call(lambda: [type(batch) for batch in broker.cluster.partition(topic, 0).log.batches])
    # the assembled frames' batches are kept where they arrived; the whole ones were copied out of the read buffer
    assert stored == [memoryview, memoryview] + [bytearray] * 40
