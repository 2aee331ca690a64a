"""An idempotent asyncio producer that discovers each partition's KIP-1269 window.

Each partition has a window: the ProducerStateBatchesToRetain value of the
last Produce v14 answer for it (5 before v14 or when absent, and 5 again after
the partition's leader changes, until the new leader answers). The partition's
limit is the smaller of that window and `max_in_flight_requests_per_connection`.
When a batch may be sent, within that limit or KIP-758's throttle
(`max_in_flight_sequence_numbers`), and in which order retries go, is
accumulator.py's; this module batches records, sends requests and reads answers.

A latest-append broker remembers only the latest batch, so a retried
batch that is not the latest is answered DUPLICATE_SEQUENCE_NUMBER: it is taken
as success with offset -1 (the record's offset is unknown), as Kafka's Java
producer does, and never retried (with or without the throttle). The throttle
is exactly-once only against a latest-append broker (`producer.state.mode`)
whose `max.in.flight.sequence.number.per.connection` is at least the bound:
there every retry lies inside the broker's duplicate range. A window-mode
broker answers a retry older than its window OUT_OF_ORDER_SEQUENCE_NUMBER.

Records without an explicit partition are partitioned as the Java client does
(see `partitioner`): by murmur2 of the key, keyless ones sticky.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from ..protocol import records
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import InitProducerIdRequest, ProduceRequest
from .accumulator import DEFAULT_BATCHES_TO_RETAIN, PartitionState, ProducerBatch, RecordMetadata
from .client import KafkaClient
from .connection import BrokerConnection, ConnectionClosed
from .partitioner import StickyPartitioner, key_partition
from .security import ClientSecurity
from .transactions import TransactionHandle, add_partitions_to_txn, end_transaction, init_producer_id

# KIP-758: the broker's duplicate range and the sequences above the latest one must not overlap in 2^31
MAX_IN_FLIGHT_SEQUENCE_NUMBERS = 2**30
MAX_PRODUCE_VERSION = 14
CODECS = {None: records.COMPRESSION_NONE, "none": records.COMPRESSION_NONE, "gzip": records.COMPRESSION_GZIP,
          "snappy": records.COMPRESSION_SNAPPY, "lz4": records.COMPRESSION_LZ4, "zstd": records.COMPRESSION_ZSTD}

RETRIABLE = frozenset({
    ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.REQUEST_TIMED_OUT,
    ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.NETWORK_EXCEPTION,
    ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.CORRUPT_MESSAGE,
    ErrorCode.UNKNOWN_TOPIC_ID, ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH,
    ErrorCode.THROTTLING_QUOTA_EXCEEDED, ErrorCode.CONCURRENT_TRANSACTIONS,
})
REFRESH_METADATA = frozenset({
    ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE,
    ErrorCode.UNKNOWN_TOPIC_ID, ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH,
})


class Producer:
    """An idempotent (acks=all) producer with batching, compression, ordered retries and KIP-1269 windows
    (or KIP-758's sequence-number throttle with `max_in_flight_sequence_numbers`)."""

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        linger_ms: float = 5,
        batch_size: int = 16384,
        compression: str | None = None,
        max_in_flight_requests_per_connection: int = 5,
        delivery_timeout_ms: int = 120_000,
        retry_backoff_ms: int = 50,
        request_timeout_ms: int = 30_000,
        produce_version: int | None = None,
        client_id: str = "minibroker-producer",
        security: ClientSecurity | None = None,
        transactional_id: str | None = None,
        transaction_timeout_ms: int = 60_000,
        max_in_flight_sequence_numbers: int | None = None,
    ) -> None:
        if produce_version is not None and not 3 <= produce_version <= MAX_PRODUCE_VERSION:
            raise ValueError(f"produce_version must be 3-{MAX_PRODUCE_VERSION}")
        if compression not in CODECS:
            raise ValueError(f"compression must be one of {sorted(c for c in CODECS if c)}")
        # no cap of 5 when idempotent: the per-partition window limits what is at risk (KIP-1269)
        if max_in_flight_requests_per_connection < 1:
            raise ValueError("max_in_flight_requests_per_connection must be at least 1")
        if max_in_flight_sequence_numbers is not None and not (
                1 <= max_in_flight_sequence_numbers <= MAX_IN_FLIGHT_SEQUENCE_NUMBERS):
            raise ValueError(f"max_in_flight_sequence_numbers must be 1-{MAX_IN_FLIGHT_SEQUENCE_NUMBERS}")
        self.client = KafkaClient(bootstrap_servers, client_id, security)
        self.linger_ms = linger_ms
        self.batch_size = batch_size
        self.codec = CODECS[compression]
        self.max_in_flight_requests_per_connection = max_in_flight_requests_per_connection
        self.delivery_timeout_ms = delivery_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.request_timeout_ms = request_timeout_ms
        self.produce_version = produce_version
        # None: KIP-1269's batch window; a number: KIP-758's throttle by sequence numbers
        self.max_in_flight_sequence_numbers = max_in_flight_sequence_numbers
        self.producer_id = -1
        self.producer_epoch = -1
        self.partitions: dict[tuple[str, int], PartitionState] = {}
        self._requests_in_flight: dict[int, int] = {}
        self._wakeup = asyncio.Event()
        self._sender: asyncio.Task[None] | None = None
        self._sticky = StickyPartitioner(batch_size)
        self._closed = False
        self._metadata_stale = False
        # transactions (V1): set by transactional_id; partitions join the open transaction on first send
        self.transactional_id = transactional_id
        self.transaction_timeout_ms = transaction_timeout_ms
        self._in_transaction = False
        self._txn_partitions: set[tuple[str, int]] = set()
        self._txn_futures: list[asyncio.Future[RecordMetadata]] = []

    # -- observable state (tests, benchmarks) -------------------------------------------------

    def partition_limit(self, topic: str, partition: int) -> int:
        """The discovered in-flight limit of a partition (5 until a v14 answer says otherwise)."""
        return self._state(topic, partition).limit

    def in_flight(self, topic: str, partition: int) -> int:
        """Batches of this partition sent and not yet answered."""
        return len(self._state(topic, partition).in_flight)

    def max_in_flight_seen(self, topic: str, partition: int) -> int:
        """The most batches of this partition that were ever in flight at once."""
        return self._state(topic, partition).max_in_flight_seen

    def in_flight_sequences(self, topic: str, partition: int) -> int:
        """Sequence numbers of this partition sent and not yet acknowledged, from the oldest such batch on."""
        return self._state(topic, partition).in_flight_sequences()

    def max_in_flight_sequences_seen(self, topic: str, partition: int) -> int:
        """The most sequence numbers of this partition that were ever unacknowledged at once."""
        return self._state(topic, partition).max_sequences_seen

    # -- life cycle --------------------------------------------------------------------------------

    async def start(self) -> None:
        await self.client.start()
        if self.transactional_id is not None:
            handle = await init_producer_id(self.client, self.transactional_id, self.transaction_timeout_ms)
            self.producer_id, self.producer_epoch = handle.producer_id, handle.producer_epoch
            self._sender = asyncio.create_task(self._send_loop())
            return
        node = next(iter(self.client.nodes))
        response = await self.client.request(node, InitProducerIdRequest(transactional_id=None,
                                                                          transaction_timeout_ms=2**31 - 1), 4)
        if response.error_code:
            raise KafkaError(ErrorCode(response.error_code), "InitProducerId failed")
        self.producer_id, self.producer_epoch = response.producer_id, response.producer_epoch
        self._sender = asyncio.create_task(self._send_loop())

    async def __aenter__(self) -> Producer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def flush(self) -> None:
        """Wait until every record sent so far is acknowledged or has failed."""
        futures = [f for state in self.partitions.values()
                   for batch in [*state.queue, *state.in_flight, *([state.open_batch] if state.open_batch else [])]
                   for f in batch.futures]
        for state in self.partitions.values():
            state.seal()
        self._wakeup.set()
        if futures:
            await asyncio.gather(*futures, return_exceptions=True)

    async def close(self) -> None:
        """Flush, then stop the sender and close connections."""
        if self._closed:
            return
        await self.flush()
        self._closed = True
        if self._sender is not None:
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sender
        await self.client.close()

    # -- sending records ---------------------------------------------------------------------------

    async def send(self, topic: str, value: bytes | None, key: bytes | None = None, partition: int | None = None,
                   headers: list[tuple[str, bytes | None]] | None = None,
                   timestamp_ms: int | None = None) -> asyncio.Future[RecordMetadata]:
        """Queue a record; the returned future gives its partition and offset once acknowledged."""
        if self._closed:
            raise RuntimeError("producer is closed")
        if topic not in self.client.topics:
            await self.client.refresh_metadata([topic])
            if topic not in self.client.topics:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {topic} is unknown")
        info = self.client.topics[topic]
        count = len(info.partitions)
        available: list[int] | None = None  # set when the sticky partitioner chose the partition
        if partition is None:
            if key is not None:
                partition = key_partition(key, count)
            else:
                available = [p.partition for p in info.partitions if p.leader >= 0]
                partition = self._sticky.partition(topic, available, count)
        elif not 0 <= partition < count:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"{topic} has no partition {partition}")
        if self.transactional_id is not None:
            await self._join_transaction(topic, partition)
        state = self._state(topic, partition)
        size = (len(key) if key else 0) + (len(value) if value else 0) + 16
        if state.open_batch is not None and state.open_batch.size + size > self.batch_size:
            state.seal()
        if state.open_batch is None:
            state.open_batch = ProducerBatch(topic, partition, time.monotonic(),
                                             transactional=self.transactional_id is not None)
        future: asyncio.Future[RecordMetadata] = asyncio.get_running_loop().create_future()
        if self.transactional_id is not None:
            self._txn_futures.append(future)
        state.open_batch.records.append((key, value, headers or [], timestamp_ms or int(time.time() * 1000)))
        state.open_batch.futures.append(future)
        state.open_batch.size += size
        if state.open_batch.size >= self.batch_size:
            state.seal()
        if available is not None:
            self._sticky.appended(topic, size, state.open_batch is None, available, count)
        self._wakeup.set()
        return future

    # -- transactions ------------------------------------------------------------------------------

    def begin_transaction(self) -> None:
        """Start a transaction (local only, as in Kafka: partitions are added as records are sent)."""
        if self.transactional_id is None:
            raise RuntimeError("begin_transaction needs a transactional_id")
        if self._in_transaction:
            raise RuntimeError("a transaction is already open")
        self._in_transaction = True
        self._txn_partitions.clear()
        self._txn_futures.clear()

    def transaction_handle(self) -> TransactionHandle:
        """What another process needs to commit or abort this producer's open transaction."""
        if self.transactional_id is None:
            raise RuntimeError("not a transactional producer")
        return TransactionHandle(self.transactional_id, self.producer_id, self.producer_epoch)

    async def flush_transaction(self) -> None:
        """Flush, and raise the first error of a record sent in this transaction.

        The transaction stays open: `commit_transaction` or `abort_transaction`
        end it here, or `end_transaction(client, transaction_handle(), ...)`
        ends it from elsewhere.
        """
        await self.flush()
        for future in self._txn_futures:
            if future.exception() is not None:
                raise future.exception()  # type: ignore[misc]

    async def commit_transaction(self) -> None:
        """Flush and commit; raises (and leaves the transaction open) if any record failed."""
        await self.flush_transaction()
        await self._end_transaction(commit=True)

    async def abort_transaction(self) -> None:
        """Flush what is in flight, then abort."""
        await self.flush()
        await self._end_transaction(commit=False)

    async def _end_transaction(self, commit: bool) -> None:
        if not self._in_transaction:
            raise RuntimeError("no transaction is open")
        if self._txn_partitions:  # a transaction with no partition was never opened on the coordinator
            await end_transaction(self.client, self.transaction_handle(), commit)
        self._in_transaction = False
        self._txn_partitions.clear()
        self._txn_futures.clear()

    async def _join_transaction(self, topic: str, partition: int) -> None:
        if not self._in_transaction:
            raise RuntimeError("a transactional producer sends only inside begin_transaction()")
        if (topic, partition) not in self._txn_partitions:
            await add_partitions_to_txn(self.client, self.transaction_handle(), [(topic, partition)])
            self._txn_partitions.add((topic, partition))

    def _state(self, topic: str, partition: int) -> PartitionState:
        state = self.partitions.get((topic, partition))
        if state is None:
            state = self.partitions[(topic, partition)] = PartitionState()
            info = self.client.topics.get(topic)
            if info is not None:
                state.leader = info.partitions[partition].leader
        return state

    # -- the sender --------------------------------------------------------------------------------

    async def _send_loop(self) -> None:
        while True:
            self._wakeup.clear()
            now = time.monotonic()
            next_linger: float | None = None
            for state in self.partitions.values():
                batch = state.open_batch
                if batch is not None:
                    due = batch.created_ms + self.linger_ms / 1000
                    if now >= due:
                        state.seal()
                    else:
                        next_linger = due if next_linger is None else min(next_linger, due)
            self._expire(now)
            if self._metadata_stale:
                await self._refresh_leaders()
            await self._drain()
            timeout = None if next_linger is None else max(next_linger - time.monotonic(), 0)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wakeup.wait(), timeout)

    def _expire(self, now: float) -> None:
        limit = self.delivery_timeout_ms / 1000
        for state in self.partitions.values():
            while state.queue and now - state.queue[0].created_ms > limit:
                state.queue.popleft().fail(KafkaError(ErrorCode.REQUEST_TIMED_OUT, "delivery timeout expired"))

    async def _refresh_leaders(self) -> None:
        self._metadata_stale = False
        try:
            await self.client.refresh_metadata(sorted({topic for topic, _ in self.partitions}))
        except (OSError, KafkaError):
            self._metadata_stale = True
            return
        for (topic, partition), state in self.partitions.items():
            leader = self.client.leader(topic, partition)
            if leader != state.leader:
                state.leader = leader
                state.limit = DEFAULT_BATCHES_TO_RETAIN  # a new leader: 5 until it answers (KIP-1269)

    async def _drain(self) -> None:
        """Send requests until the two in-flight limits (partition window, connection) or the queues stop it."""
        while await self._drain_once():
            pass

    async def _drain_once(self) -> bool:
        """One request per node, carrying one batch per ready partition; whether anything was sent."""
        sent = False
        by_node: dict[int, list[ProducerBatch]] = {}
        for state in self.partitions.values():
            head = self._sendable_head(state)
            if head is not None:
                by_node.setdefault(state.leader, []).append(head)
        for node_id, candidates in by_node.items():
            if self._requests_in_flight.get(node_id, 0) >= self.max_in_flight_requests_per_connection:
                continue
            try:
                connection = await self.client.connection(node_id)
            except (OSError, KafkaError):
                self._metadata_stale = True
                continue
            # answers may have requeued earlier batches while we waited for the connection: check again
            batches = [b for b in candidates
                       if self._sendable_head(self.partitions[(b.topic, b.partition)]) is b]
            if not batches:
                continue
            for batch in batches:
                self.partitions[(batch.topic, batch.partition)].send_head()
            # a request the connection refused is no progress: its batches wait for their retry backoff, or
            # this loop would spin on a dead connection without ever letting its reader tell us
            sent = self._send_request(node_id, connection, batches) or sent
        return sent

    def _sendable_head(self, state: PartitionState) -> ProducerBatch | None:
        """The partition's next batch if the in-flight rule lets it go now, else None."""
        return state.sendable_head(self.max_in_flight_requests_per_connection, self.max_in_flight_sequence_numbers)

    def _send_request(self, node_id: int, connection: BrokerConnection, batches: list[ProducerBatch]) -> bool:
        """Send one Produce request carrying `batches`; whether it went out (else they are queued to retry)."""
        version = self.produce_version or self.client.max_version(node_id, 0, MAX_PRODUCE_VERSION)
        topics: dict[str, Any] = {}
        for batch in batches:
            data = topics.get(batch.topic)
            if data is None:
                data = topics[batch.topic] = ProduceRequest.TopicProduceData(partition_data=[])
                if version >= 13:
                    data.topic_id = self.client.topics[batch.topic].topic_id
                else:
                    data.name = batch.topic
            data.partition_data.append(ProduceRequest.TopicProduceData.PartitionProduceData(
                index=batch.partition, records=batch.encode(self.producer_id, self.producer_epoch, self.codec)))
        request = ProduceRequest(transactional_id=self.transactional_id, acks=-1, timeout_ms=self.request_timeout_ms,
                                 topic_data=list(topics.values()))
        try:
            future = connection.send(request, version)
        except ConnectionClosed as exc:
            self._finish(batches, {}, version, exc)
            return False
        assert future is not None
        self._requests_in_flight[node_id] = self._requests_in_flight.get(node_id, 0) + 1
        # request.timeout.ms, as Kafka's NetworkClient: an answer that does not come in time closes the
        # connection, which fails every request on it, and the batches are retried with their sequences
        timer = asyncio.get_running_loop().call_later(self.request_timeout_ms / 1000, self._request_timed_out,
                                                      connection, future)

        def done(answer: asyncio.Future[Any]) -> None:
            timer.cancel()
            self._requests_in_flight[node_id] -= 1
            error = answer.exception()
            self._finish(batches, {} if error else self._by_partition(answer.result(), version), version, error)
            self._wakeup.set()

        future.add_done_callback(done)
        return True

    def _request_timed_out(self, connection: BrokerConnection, future: asyncio.Future[Any]) -> None:
        if future.done():
            return
        connection.abort(f"no answer within request.timeout.ms ({self.request_timeout_ms} ms)")
        if not future.done():  # not waiting on the connection any more: fail it all the same
            future.set_exception(ConnectionClosed("request timed out"))

    def _by_partition(self, response: Any, version: int) -> dict[tuple[str, int], Any]:
        names = {info.topic_id: name for name, info in self.client.topics.items()}
        return {(topic.name if version < 13 else names.get(topic.topic_id, ""), p.index): p
                for topic in response.responses for p in topic.partition_responses}

    def _finish(self, batches: list[ProducerBatch], answers: dict[tuple[str, int], Any], version: int,
                error: BaseException | None) -> None:
        for batch in batches:
            state = self.partitions[(batch.topic, batch.partition)]
            if batch in state.in_flight:
                state.in_flight.remove(batch)
            answer = answers.get((batch.topic, batch.partition))
            if answer is None:  # the connection went away: resend, keeping the sequence
                self._metadata_stale = True
                self._requeue(state, batch)
                continue
            code = ErrorCode(answer.error_code)
            if code is ErrorCode.NONE:
                if version >= 14:
                    state.limit = max(answer.producer_state_batches_to_retain or DEFAULT_BATCHES_TO_RETAIN, 1)
                for index, future in enumerate(batch.futures):
                    if not future.done():
                        future.set_result(RecordMetadata(batch.topic, batch.partition, answer.base_offset + index))
            elif code is ErrorCode.DUPLICATE_SEQUENCE_NUMBER:
                # KIP-758: appended before the broker's latest batch, whose offset alone it keeps; success with
                # an unknown offset, as Kafka's Java producer reports it (Sender: RecordMetadata offset -1). With
                # or without the throttle: a KIP-1269 producer has up to 5 batches in flight to a latest-append
                # leader until its first v14 answer says 1, and failing a stored batch would invite a resend.
                for future in batch.futures:
                    if not future.done():
                        future.set_result(RecordMetadata(batch.topic, batch.partition, -1))
            elif code in RETRIABLE or (code is ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
                                       and state.earlier_batch_pending(batch)):
                if code in REFRESH_METADATA:
                    self._metadata_stale = True
                self._requeue(state, batch)
            else:
                batch.fail(KafkaError(code, f"produce to {batch.topic}-{batch.partition} failed: {code.name}"))

    def _requeue(self, state: PartitionState, batch: ProducerBatch) -> None:
        if time.monotonic() - batch.created_ms > self.delivery_timeout_ms / 1000:
            batch.fail(KafkaError(ErrorCode.REQUEST_TIMED_OUT, "delivery timeout expired"))
            return
        state.requeue(batch)
        asyncio.get_running_loop().call_later(self.retry_backoff_ms / 1000, self._wakeup.set)
