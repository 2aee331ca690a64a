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

import struct
import uuid
import zlib
from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.cluster import INTERNAL_TOPICS, Partition
from ..core.log_validator import decompression_bound
from ..core.transaction_coordinator import TV_2
from ..protocol import records
from ..protocol.errors import DecompressionLimitError, ErrorCode, KafkaError, RecordValidationError
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
DEFAULT_BATCHES_TO_RETAIN = 5

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
            topic = cluster.topics_by_id.get(topic_data.topic_id)
            topic_error = ErrorCode.UNKNOWN_TOPIC_ID
        else:
            topic = cluster.topics.get(topic_data.name)
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
            elif not 0 <= data.index < len(topic.partitions):  # a known topic id too
                response = error_entry(data.index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            elif (invalid := _invalid_records(data.records, version)) is not None:
                response = (error_entry(data.index, invalid.code, message=invalid.message)
                            if isinstance(invalid, KafkaError) else error_entry(data.index, invalid))
            elif whole_request_error is not None:
                response = error_entry(data.index, whole_request_error)
            else:
                partition = topic.partitions[data.index]
                response = _produce_partition(partition, data.records, request, ctx)
                if response.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER:
                    leaders.add(partition.leader_id)
            if version >= 14:
                if topic is None:
                    window = DEFAULT_BATCHES_TO_RETAIN
                elif 0 <= data.index < len(topic.partitions):
                    window = cluster.batches_to_retain(topic.partitions[data.index])
                else:
                    window = cluster.topic_config(topic, "producer.state.batches.to.retain")
                response.producer_state_batches_to_retain = window
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
    topics = (ctx.cluster.topics_by_id.get(t.topic_id) for t in request.topic_data)
    return [topic.name for topic in topics if topic is not None]


def _invalid_records(data: bytes | bytearray | memoryview | None, version: int) -> ErrorCode | KafkaError | None:
    """ProduceRequest.validateRecords, which KafkaApis applies before ReplicaManager appends (so its answer
    carries no offsets, and it wins over acks and leadership): v3+ records hold exactly one whole batch, of
    magic 2, and not ZStandard below v7. A size field below the smallest entry is CORRUPT_MESSAGE, as
    ByteBufferLogInputStream throws; a partial batch counts as none. Null records are refused as no batch
    (Kafka's reader passes them on and fails later)."""
    if version < 3:
        return None  # Kafka validates only v3+; older message sets are converted on append
    if not data or len(data) < records.LOG_OVERHEAD:
        return ErrorCode.INVALID_RECORD
    first_end = records.LOG_OVERHEAD + _INT32.unpack_from(data, 8)[0]
    if first_end - records.LOG_OVERHEAD < records.LEGACY_RECORD_OVERHEAD_V0:
        return ErrorCode.CORRUPT_MESSAGE
    if len(data) <= records.MAGIC_OFFSET or first_end > len(data):
        return ErrorCode.INVALID_RECORD
    magic = int.from_bytes(data[records.MAGIC_OFFSET:records.MAGIC_OFFSET + 1], "big", signed=True)  # a Java byte
    if not 0 <= magic <= 2:  # ByteBufferLogInputStream.nextBatch, before validateRecords sees the batch
        return KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Invalid magic found in record: {magic}")
    if magic != 2:
        return ErrorCode.INVALID_RECORD
    if version < 7 and len(data) >= records.HEADER_SIZE and \
            data[_ATTRIBUTES_LOW_BYTE] & records.ATTR_COMPRESSION_MASK == records.COMPRESSION_ZSTD:
        return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    rest = len(data) - first_end
    if rest >= records.LOG_OVERHEAD and _INT32.unpack_from(data, first_end + 8)[0] + records.LOG_OVERHEAD <= rest:
        return ErrorCode.INVALID_RECORD  # a second whole batch
    return None


def _whole_request_error(request: ProduceRequest) -> ErrorCode | None:
    if request.acks not in (-1, 0, 1):
        return ErrorCode.INVALID_REQUIRED_ACKS
    return None


def _produce_partition(partition: Partition, data: bytes | None, request: ProduceRequest,
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
        if ctx.api_version < 3 and len(data) > records.MAGIC_OFFSET and data[records.MAGIC_OFFSET] < 2:
            data = convert_legacy_message_set(data, decompression_bound(
                ctx.cluster.topic_config(partition.topic, "max.message.bytes")))
        header = records.read_header(data)
        if ctx.api_version < 3:  # v3+ records passed _invalid_records already
            if header.magic != 2:
                raise KafkaError(ErrorCode.INVALID_RECORD, f"Unsupported record batch magic {header.magic}")
            if header.compression == records.COMPRESSION_ZSTD:
                raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                                 "Produce requests with ZStandard compression need version 7 or above")
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


# --- message sets of magic 0 and 1 (Produce v0-2) ----------------------------------------------------

_ATTRIBUTES_LOW_BYTE = 22  # a v2 batch's attributes (int16 at 21): codec and flags
_LEGACY_ENTRY = struct.Struct(">qiIbb")  # offset, message size, crc, magic, attributes
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_LOG_APPEND_TIME_ATTR = 0x08
DEFAULT_DECOMPRESSION_BOUND = decompression_bound(1048588)  # for the default max.message.bytes


def _legacy_bytes(data: bytes, pos: int, end: int) -> tuple[bytes | None, int]:
    if pos + 4 > end:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "Record is corrupt: field length past the message")
    size = _INT32.unpack_from(data, pos)[0]
    pos += 4
    if size < 0:
        return None, pos
    if pos + size > end:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "Record is corrupt: field length past the message")
    return data[pos:pos + size], pos + size


def _legacy_entries(data: bytes) -> list[tuple[int, int, int, int, bytes | None, bytes | None]]:
    """(offset, magic, attributes, timestamp, key, value) of each whole entry; a partial tail is dropped,
    as Kafka's ByteBufferLogInputStream stops at it. A CRC mismatch is CORRUPT_MESSAGE (ensureValid)."""
    entries = []
    pos = 0
    while len(data) - pos >= records.LOG_OVERHEAD:
        size = _INT32.unpack_from(data, pos + 8)[0]
        if size < records.LEGACY_RECORD_OVERHEAD_V0:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Record size {size} is less than the minimum record "
                                                        f"overhead ({records.LEGACY_RECORD_OVERHEAD_V0})")
        end = pos + records.LOG_OVERHEAD + size
        if end > len(data):
            break
        offset, _, crc, magic, attributes = _LEGACY_ENTRY.unpack_from(data, pos)
        if magic > 1:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"Log record magic {magic} does not match the message set's")
        if zlib.crc32(data[pos + 16:end]) != crc:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE,
                             f"Record is corrupt (stored crc = {crc}, computed crc = {zlib.crc32(data[pos + 16:end])})")
        field = pos + 18
        timestamp = -1  # RecordBatch.NO_TIMESTAMP: magic 0 has none
        if magic == 1:
            if field + 8 > end:
                raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "Record is corrupt: no room for the timestamp")
            timestamp = _INT64.unpack_from(data, field)[0]
            field += 8
        key, field = _legacy_bytes(data, field, end)
        value, field = _legacy_bytes(data, field, end)
        entries.append((offset, magic, attributes, timestamp, key, value))
        pos = end
    return entries


def convert_legacy_message_set(data: bytes | bytearray | memoryview, limit: int = DEFAULT_DECOMPRESSION_BOUND
                               ) -> bytes:
    """One magic 2 batch holding the records of a magic 0/1 message set, as Kafka 3.9's LogValidator
    converts them (no producer id, no headers; magic 0 records get no timestamp; a compressed wrapper's
    inner records are validated and taken out; the batch keeps the producer's codec).

    A wrapper whose messages would expand beyond `limit` bytes is MESSAGE_TOO_LARGE, as a v2 batch's are.
    """
    data = bytes(data)
    converted: list[tuple[bytes | None, bytes | None]] = []
    timestamps: list[int] = []
    codec = records.COMPRESSION_NONE
    for wrapper_offset, magic, attributes, timestamp, key, value in _legacy_entries(data):
        wrapper_codec = attributes & records.ATTR_COMPRESSION_MASK
        if wrapper_codec == records.COMPRESSION_NONE:
            converted.append((key, value))
            timestamps.append(timestamp)
            continue
        codec = wrapper_codec
        payload = value or b""
        if magic == 0 and codec == records.COMPRESSION_LZ4:
            payload = _fix_lz4_header_checksum(payload)
        try:
            # an unknown codec id is UNKNOWN_SERVER_ERROR, as Kafka's CompressionType.forId failing
            inner = b"".join(records.iter_decompressed(wrapper_codec, payload, limit))
        except DecompressionLimitError:
            raise KafkaError(ErrorCode.MESSAGE_TOO_LARGE, f"The compressed message set expands beyond {limit} "
                             "bytes") from None
        entries = _legacy_entries(inner)
        if magic == 1 and not entries:
            raise KafkaError(ErrorCode.INVALID_RECORD, "Found invalid compressed record set with no inner records")
        # AbstractLegacyRecordBatch's deep iterator: a magic 1 wrapper's offset is its last inner record's,
        # the inner ones are relative to the base that gives (used only when not negative)
        base = wrapper_offset - entries[-1][0] if entries else -1
        for expected, (inner_offset, inner_magic, inner_attributes, inner_timestamp, inner_key,
                       inner_value) in enumerate(entries):
            if inner_magic != magic:
                raise KafkaError(ErrorCode.INVALID_RECORD, "Log record magic does not match outer magic")
            if inner_attributes & records.ATTR_COMPRESSION_MASK:
                raise KafkaError(ErrorCode.INVALID_RECORD, "Compressed outer record should not have an inner record "
                                 "with a compression attribute set")
            absolute = base + inner_offset if base >= 0 else inner_offset
            if magic == 1 and absolute != expected:
                # LogValidator: the inner offsets of a magic 1 wrapper run 0, 1, ...
                raise KafkaError(ErrorCode.INVALID_RECORD, "Inner record inside the compressed record batch does "
                                 f"not have incremental offsets, expected offset is {expected}")
            converted.append((inner_key, inner_value))
            # a wrapper stamped with LogAppendTime gives its time to every inner record
            timestamps.append(timestamp if attributes & _LOG_APPEND_TIME_ATTR else inner_timestamp)
    if not converted:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "Produce request carries no whole message")
    return records.build_batch(converted, timestamps=timestamps, compression=codec)


_LZ4_MAGIC = b"\x04\x22\x4d\x18"


def _fix_lz4_header_checksum(payload: bytes) -> bytes:
    """Magic 0 LZ4 wrappers carry Kafka 0.8's wrong frame header checksum (KAFKA-3160: it hashed the magic
    too); Kafka reads them ignoring it, so the right one is written before the frame is decoded."""
    if len(payload) < 7 or payload[:4] != _LZ4_MAGIC:
        return payload
    flags = payload[4]
    end = 6 + (8 if flags & 0x08 else 0) + (4 if flags & 0x01 else 0)  # content size, dictionary id
    if len(payload) <= end:
        return payload
    checksum = (records.xxh32_short(payload[4:end]) >> 8) & 0xFF
    return payload[:end] + bytes((checksum,)) + payload[end + 1:]
