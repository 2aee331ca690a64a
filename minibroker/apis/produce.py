"""Produce (0): validate and append one batch per partition; v14 reports the KIP-1269 window.

Versions 3-14 at every profile. v0-2 (message sets of magic 0 and 1, removed by KIP-896 in Kafka 4.0) are
advertised by every profile, as Kafka 4 advertises them (KAFKA-18659), and served only for release profiles
before 4.0, converted to one magic 2 batch on append as Kafka 3.9's LogValidator does (its broker wrote message
format v2 whatever the producer sent). v3 adds the transactional id and message format v2; v5 answers the log
start offset; v7 allows zstd (KIP-110); v8 answers record errors and an error message (KIP-467); v9 is
flexible; v10 adds the current leader and node endpoints (KIP-951); v11 may answer TRANSACTION_ABORTABLE
(KIP-890 part 1); v12 is a transactions V2 client (KIP-890 part 2): the first transactional batch of a producer
epoch adds its partition to the transaction at the coordinator (Kafka's AddPartitionsToTxnManager), which
refuses a stale or fenced epoch and an unknown producer id; v13 names topics by id (KIP-516); v14 (KIP-1269,
schemas/) reports the producer state window. Mirrors KafkaApis.handleProduceRequest, ReplicaManager.appendRecords
and LogValidator.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.cluster_model import INTERNAL_TOPICS, Partition
from ..core.log_validator import decompression_bound, old_produce_batch
from ..core.transaction_coordinator import TV_2
from ..protocol import records
from ..protocol.errors import ErrorCode, KafkaError, RecordValidationError
from ..protocol.messages import ProduceRequest, ProduceResponse, quick_data
from ..protocol.produce_response import encode_produce_response
from .context import CloseConnection, RequestContext

API_KEY = 0
MIN_VERSION, MAX_VERSION = 3, 14
# Kafka 4 advertises Produce from v0 (KAFKA-18659: older librdkafka turns compression
# off otherwise) while refusing v0-2 requests, which close the connection.
ADVERTISED_MIN_VERSION = 0
# Releases before 4.0 served Produce from v0 (KIP-896 removed v0-2).
PRE_KIP896_MIN_VERSION = 0

_TopicResponse = ProduceResponse.TopicProduceResponse
_PartitionResponse = _TopicResponse.PartitionProduceResponse
_LeaderIdAndEpoch = _PartitionResponse.LeaderIdAndEpoch
_NodeEndpoint = ProduceResponse.NodeEndpoint

# Errors raised inside the append for which Kafka reports log_start_offset -1.
_NO_LOG_START = frozenset({
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.MESSAGE_TOO_LARGE,
    ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.CORRUPT_MESSAGE, ErrorCode.KAFKA_STORAGE_ERROR,
    ErrorCode.UNKNOWN_TOPIC_ID,
})
ZERO_UUID = uuid.UUID(int=0)


def error_entry(index: int, code: ErrorCode, log_start_offset: int = -1, message: str | None = None,
                **extra: Any) -> Any:
    """A partition's answer carrying `code` and no offsets."""
    return _PartitionResponse(index=index, error_code=code, base_offset=-1, log_append_time_ms=-1,
                              log_start_offset=log_start_offset, record_errors=[], error_message=message, **extra)


def handle(request: ProduceRequest, ctx: RequestContext) -> ProduceResponse | None:
    cluster = ctx.cluster
    version = ctx.api_version
    if _transactional_id_refused(request, ctx):
        return _every_partition(request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    whole_request_error = _whole_request_error(request)
    writable = (None if cluster.authorizer is None else
                ctx.authorized_names(AclOperation.WRITE, ResourceType.TOPIC, _topic_names(request, ctx)))
    any_error = False
    leaders: set[int] = set()
    topic_responses = []
    for topic_data in request.topic_data:
        if version >= 13:
            topic = cluster.topic_by_id(topic_data.topic_id)
            topic_error = ErrorCode.UNKNOWN_TOPIC_ID
        else:
            topic = cluster.topic(topic_data.name)
            topic_error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        partition_responses = []
        # KafkaApis.handleProduceRequest: an unknown id, then WRITE on the topic, then an unknown topic or
        # partition, each answered on its own whatever else is wrong with the request
        refused = (writable is not None and (topic is not None or version < 13)
                   and (topic.name if topic is not None else topic_data.name) not in writable)
        for data in topic_data.partition_data:
            if refused:
                response = error_entry(data.index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            elif topic is None:
                response = error_entry(data.index, topic_error)
            elif (partition := topic.partition(data.index)) is None:  # a known topic id too
                response = error_entry(data.index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            elif version >= VALIDATES_RECORDS_FROM and (invalid := records.produce_records_error(
                    data.records, zstd_allowed=version >= ZSTD_FROM)) is not None:
                response = error_entry(data.index, invalid.code, message=invalid.message)
            elif whole_request_error is not None:
                response = error_entry(data.index, whole_request_error)
            else:
                response = _produce_partition(partition, data.records, request, ctx)
                if response.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
                    leaders.add(partition.leader_id)
            if version >= 14:
                response.producer_state_batches_to_retain = cluster.reported_batches_to_retain(topic, data.index)
            any_error = any_error or response.error_code != 0
            partition_responses.append(response)
        # the codec reads the zero topic id as None; the answer names it as it came
        topic_responses.append(topic_response((topic_data.topic_id or ZERO_UUID) if version >= 13 else topic_data.name,
                                              version, partition_responses))
    if request.acks == 0:
        if any_error:
            # Kafka closes the connection so an acks=0 producer notices and refreshes metadata.
            raise CloseConnection("acks=0 produce failed")
        return None
    node_endpoints = []
    if version >= 10:
        for node_id in sorted(leaders):
            node = cluster.node(node_id)
            if node is not None:
                host, port = ctx.address(node)
                node_endpoints.append(_NodeEndpoint(node_id=node.node_id, host=host, port=port, rack=node.rack))
    return quick_data(ProduceResponse, responses=topic_responses, throttle_time_ms=0, node_endpoints=node_endpoints)


def encode_body(response: ProduceResponse, version: int) -> bytes | None:
    """The answer's body written without the engine when it is the common one (see dispatch.encode_response)."""
    if version < MIN_VERSION:
        return None  # v0-2 answers (old release profiles) are rare: the engine writes them
    return encode_produce_response(response, version)


def topic_response(key: Any, version: int, partition_responses: list[Any]) -> Any:
    """A topic's answer, named by topic id from v13 and by name before."""
    if version >= 13:
        return quick_data(_TopicResponse, topic_id=key, partition_responses=partition_responses)
    return quick_data(_TopicResponse, name=key, partition_responses=partition_responses)


# ProduceRequest.validateRecords applies from v3 (one batch of magic 2; older message sets are converted on
# append), and ZStandard from v7 (KIP-110)
VALIDATES_RECORDS_FROM, ZSTD_FROM = 3, 7
# Produce learnt TRANSACTION_ABORTABLE in v11 (KIP-890); older requests get INVALID_TXN_STATE.
TRANSACTION_ABORTABLE_FROM = 11
# v12 is a transactions V2 client (KIP-890 part 2): its partitions join the transaction without AddPartitionsToTxn
# (AddPartitionsToTxnManager.produceRequestVersionToTransactionSupportedOperation)
ADDS_PARTITION_FROM = 12


def _verification_error(index: int, verdict: ErrorCode, version: int) -> Any:
    """The partition is not in the producer's transaction: Kafka's translated answer (reference §5.5)."""
    message = None
    if verdict is ErrorCode.TRANSACTION_ABORTABLE and version < TRANSACTION_ABORTABLE_FROM:
        verdict = ErrorCode.INVALID_TXN_STATE
    if verdict is ErrorCode.INVALID_TXN_STATE:
        message = "Partition was not added to the transaction"
    elif verdict is ErrorCode.PRODUCER_FENCED:
        verdict = ErrorCode.INVALID_PRODUCER_EPOCH
    elif verdict in (ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                     ErrorCode.NOT_COORDINATOR):
        message = f"Unable to verify the partition has been added to the transaction. Underlying error: {verdict.name}"
        verdict = ErrorCode.NOT_ENOUGH_REPLICAS
    response = error_entry(index, verdict)
    response.error_message = message
    return response


def _add_or_verify(partition: Partition, header: records.BatchHeader, transactional_id: str | None,
                   ctx: RequestContext) -> ErrorCode:
    """The coordinator's verdict on the first transactional batch of a producer epoch on a partition
    (ReplicaManager.maybeSendPartitionsToTransactionCoordinator): from v12 (TV2) the partition joins the
    transaction, whatever `transaction.partition.verification.enable` says; v11 and before are only verified, and
    only when that config is on."""
    transactions = ctx.cluster.transactions
    if ctx.api_version >= ADDS_PARTITION_FROM:
        return transactions.add_partitions(transactional_id or "", header.producer_id, header.producer_epoch,
                                           [(partition.topic.name, partition.index)], TV_2)
    if not ctx.cluster.config["transaction.partition.verification.enable"]:
        return ErrorCode.NONE
    return transactions.verify_partition(transactional_id, header.producer_id, header.producer_epoch,
                                         partition.topic.name, partition.index)


def _transactional_id_refused(request: ProduceRequest, ctx: RequestContext) -> bool:
    """Transactional batches need a transactional id the caller may WRITE; else Kafka refuses the whole request."""
    if request.transactional_id is not None and ctx.cluster.authorizer is None:
        return False
    if not _carries_transactional_batch(request):
        return False
    return request.transactional_id is None or not ctx.authorize(
        AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)


def _carries_transactional_batch(request: ProduceRequest) -> bool:
    """ProduceRequest.hasTransactionalRecords: any partition's records hold a transactional batch."""
    for topic_data in request.topic_data:
        for data in topic_data.partition_data:
            if records.has_transactional_batch(data.records):
                return True
    return False


def _every_partition(request: ProduceRequest, code: ErrorCode) -> ProduceResponse | None:
    """ProduceRequest.getErrorResponse: every partition gets `code`; for acks=0 Kafka closes the connection."""
    if request.acks == 0:
        raise CloseConnection(f"acks=0 produce failed: {code.name}")
    return ProduceResponse(throttle_time_ms=0, node_endpoints=[], responses=[
        _TopicResponse(name=t.name, topic_id=t.topic_id or ZERO_UUID, partition_responses=[
            error_entry(p.index, code) for p in t.partition_data]) for t in request.topic_data])


def _topic_names(request: ProduceRequest, ctx: RequestContext) -> list[str]:
    """The names of the topics a request writes to (from v13 by id: the ids the cluster knows)."""
    if ctx.api_version < 13:
        return [t.name for t in request.topic_data]
    topics = (ctx.cluster.topic_by_id(t.topic_id) for t in request.topic_data)
    return [topic.name for topic in topics if topic is not None]


def _whole_request_error(request: ProduceRequest) -> ErrorCode | None:
    if request.acks not in (-1, 0, 1):
        return ErrorCode.INVALID_REQUIRED_ACKS
    return None


def _produce_partition(partition: Partition, data: bytes | bytearray | memoryview | None, request: ProduceRequest,
                       ctx: RequestContext) -> Any:
    index = partition.index
    log = partition.log
    if partition.topic.name in INTERNAL_TOPICS and ctx.client_id != "__admin_client":
        return error_entry(index, ErrorCode.INVALID_TOPIC_EXCEPTION, log.log_start_offset)
    if partition.leader_id != ctx.node.node_id:
        extra = {}
        if ctx.api_version >= 10:
            extra["current_leader"] = _LeaderIdAndEpoch(leader_id=partition.leader_id,
                                                        leader_epoch=log.leader_epoch)
        return error_entry(index, ErrorCode.NOT_LEADER_OR_FOLLOWER, **extra)
    if request.acks == -1 and ctx.cluster.topic_config(partition.topic, "min.insync.replicas") > len(
            partition.replicas):
        # every replica shares the one log, so the ISR is all replicas; acks=all needs min.insync.replicas of them
        return error_entry(index, ErrorCode.NOT_ENOUGH_REPLICAS, log.log_start_offset)
    try:
        if not data:
            raise KafkaError(ErrorCode.INVALID_RECORD, "Produce request carries no record batch")
        if ctx.api_version < VALIDATES_RECORDS_FROM:  # later versions' records passed produce_records_error
            data = old_produce_batch(data, decompression_bound(
                ctx.cluster.topic_config(partition.topic, "max.message.bytes")))
        header = records.read_header(data)
        if header.is_transactional and request.transactional_id is None:
            raise KafkaError(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        if header.is_transactional and not partition.producer_state.has_open_txn(header.producer_id,
                                                                                 header.producer_epoch):
            verdict = _add_or_verify(partition, header, request.transactional_id, ctx)
            if verdict is not ErrorCode.NONE:
                return _verification_error(index, verdict, ctx.api_version)
        # the header is read once, here; a batch in a frame of its own is stored as it is (no copy)
        result = ctx.cluster.append(partition, data, header, take_over=ctx.frame_owned and isinstance(
            data, memoryview))
    except RecordValidationError as exc:
        # ReplicaManager: refused records are listed, and the summary is the error message (v8+ carry both)
        return _PartitionResponse(
            index=index, error_code=exc.code, base_offset=-1, log_append_time_ms=-1,
            log_start_offset=log.log_start_offset,
            record_errors=[_PartitionResponse.BatchIndexAndErrorMessage(
                batch_index=error.batch_index, batch_index_error_message=error.message)
                for error in exc.record_errors],
            error_message=exc.summary,
        )
    except KafkaError as exc:
        return error_entry(index, exc.code, -1 if exc.code in _NO_LOG_START else log.log_start_offset)
    return quick_data(_PartitionResponse, index=index, error_code=0, base_offset=result.base_offset,
                      log_append_time_ms=result.log_append_time, log_start_offset=result.log_start_offset,
                      record_errors=[], error_message=None)

