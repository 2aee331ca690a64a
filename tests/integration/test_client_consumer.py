"""The client's read path (fetch_range, list_offsets) and its transactional producer, without Spark."""

from __future__ import annotations

from minibroker.client import KafkaClient, Producer
from minibroker.client.consumer import EARLIEST, LATEST, READ_COMMITTED, fetch_range, list_offsets
from minibroker.client.transactions import end_transaction
from tests.helpers import unique_topic


async def read(client: KafkaClient, topic: str, start: int, end: int, **options) -> list[tuple[int, bytes | None]]:
    out = []
    async for columns in fetch_range(client, topic, 0, start, end, **options):
        out += list(zip(columns.offsets, columns.values, strict=True))
    return out


async def test_fetch_range_cuts_batches_at_both_ends_and_chunks_the_result(broker):
    topic = unique_topic("consumer-range")
    async with Producer(broker.bootstrap_servers, linger_ms=50, batch_size=200) as producer:
        for index in range(100):  # batches of about ten records
            await producer.send(topic, f"v{index}".encode(), partition=0, headers=[("i", str(index).encode())])
    client = KafkaClient(broker.bootstrap_servers)
    await client.start()
    try:
        assert await list_offsets(client, [(topic, 0)], EARLIEST) == {(topic, 0): 0}
        assert await list_offsets(client, [(topic, 0)], LATEST) == {(topic, 0): 100}
        assert await read(client, topic, 37, 61) == [(i, f"v{i}".encode()) for i in range(37, 61)]
        chunks = [len(c) async for c in fetch_range(client, topic, 0, 0, 100, max_records=30)]
        assert sum(chunks) == 100 and min(chunks[:-1]) >= 30 and len(chunks) >= 2
        async for columns in fetch_range(client, topic, 0, 5, 6):
            assert columns.headers == [[("i", b"5")]]
            assert columns.timestamp_types == [0]
    finally:
        await client.close()


async def test_transactions_handed_over_are_ended_elsewhere_and_read_committed_sees_only_commits(broker):
    topic = unique_topic("consumer-txn")
    transactional_id = unique_topic("tx")
    producer = Producer(broker.bootstrap_servers, transactional_id=transactional_id, linger_ms=1)
    await producer.start()
    producer.begin_transaction()
    for index in range(3):
        await producer.send(topic, f"kept{index}".encode(), partition=0)
    await producer.flush_transaction()
    handle = producer.transaction_handle()
    await producer.close()  # leaves the transaction open
    client = KafkaClient(broker.bootstrap_servers)
    await client.start()
    try:
        assert await list_offsets(client, [(topic, 0)], LATEST, READ_COMMITTED) == {(topic, 0): 0}
        await end_transaction(client, handle, commit=True)  # from another client, as a Spark driver does
        # a later instance fences the epoch and its aborted transaction is invisible to read_committed
        fenced = Producer(broker.bootstrap_servers, transactional_id=transactional_id, linger_ms=1)
        await fenced.start()
        assert fenced.producer_epoch > handle.producer_epoch
        fenced.begin_transaction()
        await fenced.send(topic, b"dropped", partition=0)
        await fenced.abort_transaction()
        await fenced.close()
        end = (await list_offsets(client, [(topic, 0)], LATEST))[(topic, 0)]
        committed = await read(client, topic, 0, end, isolation_level=READ_COMMITTED)
        assert [value for _, value in committed] == [b"kept0", b"kept1", b"kept2"]
        everything = await read(client, topic, 0, end)
        assert [value for _, value in everything] == [b"kept0", b"kept1", b"kept2", b"dropped"]
    finally:
        await client.close()
