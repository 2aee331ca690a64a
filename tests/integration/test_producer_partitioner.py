"""The project's producer picks partitions as Kafka's Java client does: murmur2 of the key, sticky without one."""

from __future__ import annotations

import asyncio

from confluent_kafka import Producer as ConfluentProducer

from minibroker.client import Producer
from minibroker.client.partitioner import key_partition, murmur2
from minibroker.client.stamping import stamp
from tests.helpers import unique_topic
from tests.integration.test_kip1269_producer import read_back

KEYS = [b"key-%d" % i for i in range(40)]


def new_topic(broker, partitions: int) -> str:
    return broker.create_topic(unique_topic("partitioner"), partitions, replication_factor=1)


def test_murmur2_is_kafkas_hash():
    # values from Kafka's own tests of Utils.murmur2 (UtilsTest.testMurmur2)
    assert murmur2(b"21") == -973932308
    assert murmur2(b"foobar") == -790332482
    assert murmur2(b"a-little-bit-long-string") == -985981536
    assert murmur2(b"a-little-bit-longer-string") == -1486304829
    assert murmur2(b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8") == -58897971
    assert murmur2(b"abc") == 479470107
    # Utils.toPositive(murmur2) % n: the sign bit is masked, not negated
    assert key_partition(b"21", 7) == (-973932308 & 0x7FFFFFFF) % 7


async def test_records_with_one_key_all_go_to_the_keys_murmur2_partition(broker):
    topic = new_topic(broker, 3)
    async with Producer(broker.bootstrap_servers, linger_ms=0) as producer:
        futures = [await producer.send(topic, b"same-%d" % i, key=b"user-42", headers=stamp("same", i))
                   for i in range(6)]
        partitions = [(await f).partition for f in futures]
    assert partitions == [key_partition(b"user-42", 3)] * 6
    seen = read_back(broker, topic, 3, 6)
    assert [value for value, _ in seen[key_partition(b"user-42", 3)]] == [b"same-%d" % i for i in range(6)]


async def test_keys_land_where_librdkafkas_murmur2_partitioner_puts_them(broker):
    ours, theirs = new_topic(broker, 5), new_topic(broker, 5)
    async with Producer(broker.bootstrap_servers, linger_ms=0) as producer:
        futures = [await producer.send(ours, b"v", key=key) for key in KEYS]
        our_partitions = {key: (await f).partition for key, f in zip(KEYS, futures, strict=True)}
    confluent = ConfluentProducer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True,
                                   "partitioner": "murmur2_random", "linger.ms": 0})
    their_partitions: dict[bytes, int] = {}
    for key in KEYS:
        confluent.produce(theirs, value=b"v", key=key,
                          on_delivery=lambda err, msg: their_partitions.__setitem__(msg.key(), msg.partition()))
    assert confluent.flush(30) == 0
    assert our_partitions == their_partitions
    assert our_partitions == {key: key_partition(key, 5) for key in KEYS}
    assert len(set(our_partitions.values())) == 5


async def test_an_empty_key_is_hashed_and_an_explicit_partition_wins_over_the_key(broker):
    topic = new_topic(broker, 4)
    async with Producer(broker.bootstrap_servers, linger_ms=0) as producer:
        empty = [await producer.send(topic, b"e", key=b"") for _ in range(3)]
        pinned = [await producer.send(topic, b"p", key=b"user-42", partition=p) for p in range(4)]
        assert [(await f).partition for f in empty] == [key_partition(b"", 4)] * 3
        assert [(await f).partition for f in pinned] == [0, 1, 2, 3]


async def test_keyless_records_stick_to_a_partition_for_a_batch_then_move_to_the_next(broker):
    topic = new_topic(broker, 3)
    # each record counts 10 value bytes + 16 of overhead: a batch of 260 bytes holds 10 records
    async with Producer(broker.bootstrap_servers, linger_ms=60_000, batch_size=260) as producer:
        futures = [await producer.send(topic, b"%010d" % i, headers=stamp("sticky", i)) for i in range(65)]
        await producer.flush()
        partitions = [(await f).partition for f in futures]
    first = partitions[0]
    assert partitions == [(first + i // 10) % 3 for i in range(65)]
    seen = read_back(broker, topic, 3, 65)
    for p in range(3):
        expected = [i for i in range(65) if partitions[i] == p]
        assert [s for _, s in seen[p]] == [("sticky", i) for i in expected]


async def test_keyless_records_of_many_producers_spread_over_the_partitions(broker):
    topic = new_topic(broker, 3)

    async def one_producer() -> list[int]:
        async with Producer(broker.bootstrap_servers, linger_ms=60_000, batch_size=260) as producer:
            futures = [await producer.send(topic, b"%010d" % i) for i in range(30)]
            await producer.flush()
            return [(await f).partition for f in futures]

    runs = await asyncio.gather(*(one_producer() for _ in range(3)))
    for partitions in runs:  # each producer wrote one full batch to every partition
        assert sorted(partitions) == [p for p in range(3) for _ in range(10)]
