"""Transaction coordinator requests: find the coordinator, InitProducerId, AddPartitionsToTxn, EndTxn.

These are the transactions V1 client paths (AddPartitionsToTxn v3, EndTxn v3).
`end_transaction` needs only the (transactional id, producer id, epoch) a
producer handed over, so a process other than the producer (e.g. a Spark
driver) can commit or abort the producer's open transaction.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import (
    AddPartitionsToTxnRequest,
    DescribeTransactionsRequest,
    EndTxnRequest,
    FindCoordinatorRequest,
    InitProducerIdRequest,
)
from .client import KafkaClient

TRANSACTION_KEY_TYPE = 1
FIND_COORDINATOR_VERSION = 3
INIT_PRODUCER_ID_VERSION = 4
ADD_PARTITIONS_VERSION = 3
END_TXN_VERSION = 3
DESCRIBE_TRANSACTIONS_VERSION = 0
ONGOING_STATES = frozenset({"Ongoing", "PrepareCommit", "PrepareAbort"})
COORDINATOR_RETRIABLE = frozenset({
    ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.REQUEST_TIMED_OUT,
})


@dataclass(frozen=True)
class TransactionHandle:
    """What it takes to end an open transaction from anywhere: its id, producer id and epoch."""

    transactional_id: str
    producer_id: int
    producer_epoch: int


async def find_coordinator(client: KafkaClient, transactional_id: str) -> int:
    """The node id of the transaction coordinator of `transactional_id`."""
    node = next(iter(client.nodes))
    response = await client.request(node, FindCoordinatorRequest(key=transactional_id,
                                                                 key_type=TRANSACTION_KEY_TYPE),
                                    FIND_COORDINATOR_VERSION)
    if response.error_code:
        raise KafkaError(ErrorCode(response.error_code), f"FindCoordinator for {transactional_id} failed")
    if response.node_id not in client.nodes:
        await client.refresh_metadata([])
    return int(response.node_id)


async def _with_coordinator(client: KafkaClient, transactional_id: str, build: Any, version: int,
                            error_of: Any, what: str, retries: int = 40, backoff_s: float = 0.05) -> Any:
    """Send `build()` to the coordinator, re-finding it and backing off on retriable errors."""
    for attempt in range(retries):
        coordinator = await find_coordinator(client, transactional_id)
        response = await client.request(coordinator, build(), version)
        code = ErrorCode(error_of(response))
        if code is ErrorCode.NONE:
            return response
        if code not in COORDINATOR_RETRIABLE or attempt == retries - 1:
            raise KafkaError(code, f"{what} for {transactional_id} failed: {code.name}")
        await asyncio.sleep(backoff_s * min(attempt + 1, 10))
    raise AssertionError("unreachable")


async def init_producer_id(client: KafkaClient, transactional_id: str,
                           transaction_timeout_ms: int) -> TransactionHandle:
    """InitProducerId for a transactional id: bumps the epoch, fencing and aborting an older instance."""
    response = await _with_coordinator(
        client, transactional_id,
        lambda: InitProducerIdRequest(transactional_id=transactional_id,
                                      transaction_timeout_ms=transaction_timeout_ms),
        INIT_PRODUCER_ID_VERSION, lambda r: r.error_code, "InitProducerId")
    return TransactionHandle(transactional_id, response.producer_id, response.producer_epoch)


async def add_partitions_to_txn(client: KafkaClient, handle: TransactionHandle,
                                partitions: list[tuple[str, int]]) -> None:
    """Add partitions to the open transaction (v3, the client path of transactions V1)."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)

    def build() -> Any:
        return AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=handle.transactional_id,
            v3_and_below_producer_id=handle.producer_id, v3_and_below_producer_epoch=handle.producer_epoch,
            v3_and_below_topics=[AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=t, partitions=p)
                                 for t, p in by_topic.items()])

    def first_error(response: Any) -> int:
        codes = [p.partition_error_code for t in response.results_by_topic_v3_and_below
                 for p in t.results_by_partition if p.partition_error_code]
        return codes[0] if codes else 0

    await _with_coordinator(client, handle.transactional_id, build, ADD_PARTITIONS_VERSION, first_error,
                            "AddPartitionsToTxn")


async def end_transaction(client: KafkaClient, handle: TransactionHandle, commit: bool) -> None:
    """EndTxn: commit or abort the open transaction of `handle`."""
    await _with_coordinator(
        client, handle.transactional_id,
        lambda: EndTxnRequest(transactional_id=handle.transactional_id, producer_id=handle.producer_id,
                              producer_epoch=handle.producer_epoch, committed=commit),
        END_TXN_VERSION, lambda r: r.error_code, "EndTxn(commit)" if commit else "EndTxn(abort)")


async def ongoing_transactions(client: KafkaClient, transactional_ids: list[str]) -> list[str]:
    """Those of `transactional_ids` whose coordinator has a transaction in progress (DescribeTransactions)."""
    by_coordinator: dict[int, list[str]] = {}
    for transactional_id in transactional_ids:
        by_coordinator.setdefault(await find_coordinator(client, transactional_id), []).append(transactional_id)
    ongoing = []
    for coordinator, ids in by_coordinator.items():
        response = await client.request(coordinator, DescribeTransactionsRequest(transactional_ids=ids),
                                        DESCRIBE_TRANSACTIONS_VERSION)
        ongoing += [state.transactional_id for state in response.transaction_states
                    if state.error_code == 0 and state.transaction_state in ONGOING_STATES]
    return ongoing
