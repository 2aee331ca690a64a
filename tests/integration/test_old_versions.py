"""The versions KIP-896 removed from Kafka 4.0, served by nodes speaking as 3.9 or 2.8 and refused by 4.x ones.

Each request goes through `handle_frame` as bytes at the old version (tests/apis/authz.py `call`), so what is
checked is what an old client reads. OffsetCommit v0 and OffsetFetch v0 meant "in ZooKeeper": a KRaft 3.9
broker refuses them with UNSUPPORTED_VERSION, and so do we. Fetch v0-3 answers are down-converted message
sets (magic 0 for v0-1, magic 1 for v2-3), read back here with kafka-python's own legacy reader. The Go
clients that send these versions are in test_go_clients.py.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import pytest
from kafka.record.memory_records import MemoryRecords

from minibroker.apis.context import CloseConnection, Session
from minibroker.apis.dispatch import Reply, handle_frame
from minibroker.core import log_validator
from minibroker.core.acls import AclOperation, AclPermissionType, PatternType, ResourceType
from minibroker.core.cluster import Cluster
from minibroker.protocol import compression, legacy_records, records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    CreateAclsRequest,
    DeleteAclsRequest,
    DescribeAclsRequest,
    DescribeLogDirsRequest,
    FetchRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    OffsetForLeaderEpochRequest,
    ProduceRequest,
)
from minibroker.testing.wire import WireClient
from tests.apis.authz import ADMIN, NOW, acl, allow, call, secured_cluster

OLD = ["2.8", "3.9"]
NEW = ["latest", "4.0", "4.2"]
TOPIC = "old"


def _cluster(release: str, secured: bool = False) -> Cluster:
    cluster = secured_cluster() if secured else secured_cluster(**{"authorizer.class.name": ""})
    cluster.nodes[0].release = release
    cluster.create_topic(TOPIC, 2)
    return cluster


def _produce(cluster: Cluster, values: list[bytes], partition: int = 0) -> None:
    batch = records.build_batch([(None, v) for v in values], timestamp=NOW)
    answer = call(cluster, ProduceRequest(transactional_id=None, acks=-1, timeout_ms=1000, topic_data=[
        ProduceRequest.TopicProduceData(name=TOPIC, partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=partition, records=batch)])]), 3,
        principal=ADMIN)
    assert answer.responses[0].partition_responses[0].error_code == 0


# --- OffsetCommit v0-1, OffsetFetch v0 ---------------------------------------------------------------------

def _commit(offset: int, partitions: tuple[int, ...] = (0,), group: str = "g", topic: str = TOPIC) -> Any:
    part = OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition
    return OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=-1, member_id="", topics=[
        OffsetCommitRequest.OffsetCommitRequestTopic(name=topic, partitions=[
            part(partition_index=p, committed_offset=offset, commit_timestamp=-1, committed_metadata="m")
            for p in partitions])])


def _fetch_offsets(partitions: tuple[int, ...] = (0,), group: str = "g") -> Any:
    return OffsetFetchRequest(group_id=group, topics=[
        OffsetFetchRequest.OffsetFetchRequestTopic(name=TOPIC, partition_indexes=list(partitions))])


def _codes(answer: Any) -> list[tuple[str, int, int]]:
    return sorted((t.name, p.partition_index, p.error_code) for t in answer.topics for p in t.partitions)


@pytest.mark.parametrize("profile", OLD)
def test_offset_commit_v1_commits_and_offset_fetch_v1_reads_it_back(profile):
    cluster = _cluster(profile)
    assert _codes(call(cluster, _commit(7, (0, 1)), 1)) == [(TOPIC, 0, 0), (TOPIC, 1, 0)]
    fetched = call(cluster, _fetch_offsets((0, 1)), 1)
    assert sorted((p.partition_index, p.committed_offset, p.metadata, p.error_code)
                  for t in fetched.topics for p in t.partitions) == [(0, 7, "m", 0), (1, 7, "m", 0)]
    # a v1 commit naming a member the (empty) group does not have is refused as v2 refuses it
    member = _commit(8)
    member.generation_id_or_member_epoch, member.member_id = 3, "someone"
    assert _codes(call(cluster, member, 1)) == [(TOPIC, 0, ErrorCode.UNKNOWN_MEMBER_ID)]


@pytest.mark.parametrize("profile", OLD)
def test_offset_commit_v0_is_the_zookeeper_commit_a_kraft_broker_refuses(profile):
    cluster = _cluster(profile)
    assert _codes(call(cluster, _commit(5, (0, 1)), 0)) == [
        (TOPIC, 0, ErrorCode.UNSUPPORTED_VERSION), (TOPIC, 1, ErrorCode.UNSUPPORTED_VERSION)]
    # the checks before the ZooKeeper path still answer on their own
    assert _codes(call(cluster, _commit(5, topic="nope"), 0)) == [("nope", 0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    assert call(cluster, _fetch_offsets(), 1).topics[0].partitions[0].committed_offset == -1


@pytest.mark.parametrize("profile", OLD)
def test_offset_fetch_v0_is_answered_unsupported_on_every_partition(profile):
    cluster = _cluster(profile)
    call(cluster, _commit(4), 2)
    assert _codes(call(cluster, _fetch_offsets((0, 1)), 0)) == [
        (TOPIC, 0, ErrorCode.UNSUPPORTED_VERSION), (TOPIC, 1, ErrorCode.UNSUPPORTED_VERSION)]


def test_an_unauthorized_group_is_refused_before_the_zookeeper_path():
    cluster = _cluster("3.9", secured=True)
    assert _codes(call(cluster, _fetch_offsets(), 0)) == [(TOPIC, 0, ErrorCode.GROUP_AUTHORIZATION_FAILED)]
    assert _codes(call(cluster, _commit(1), 0)) == [(TOPIC, 0, ErrorCode.GROUP_AUTHORIZATION_FAILED)]
    allow(cluster, "User:alice", AclOperation.READ, ResourceType.GROUP, "g")
    # READ on the group but not on the topic: the topic check answers before the ZooKeeper path
    assert _codes(call(cluster, _commit(1), 0)) == [(TOPIC, 0, ErrorCode.TOPIC_AUTHORIZATION_FAILED)]


# --- OffsetForLeaderEpoch v0-1 -------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", OLD)
@pytest.mark.parametrize("version", [0, 1])
def test_offset_for_leader_epoch_v0_v1_answer_the_end_offset(profile, version):
    cluster = _cluster(profile)
    _produce(cluster, [b"a", b"b", b"c"])
    topic = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
    request = OffsetForLeaderEpochRequest(topics=[topic(topic=name, partitions=[
        topic.OffsetForLeaderPartition(partition=0, leader_epoch=0)]) for name in (TOPIC, "nope")])
    answer = call(cluster, request, version)
    found = {t.topic: t.partitions[0] for t in answer.topics}
    assert (found[TOPIC].error_code, found[TOPIC].end_offset) == (0, 3)
    assert found["nope"].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if version == 1:
        assert found[TOPIC].leader_epoch == 0


# --- ACLs v0 -----------------------------------------------------------------------------------------------

def _creation(name: str) -> Any:
    return CreateAclsRequest.AclCreation(
        resource_type=ResourceType.TOPIC, resource_name=name, principal="User:bob", host="*",
        operation=AclOperation.READ, permission_type=AclPermissionType.ALLOW)


def _acl_filter(cls: Any) -> Any:
    return cls(resource_type_filter=ResourceType.TOPIC, resource_name_filter=None, principal_filter=None,
               host_filter=None, operation=AclOperation.ANY, permission_type=AclPermissionType.ANY)


@pytest.mark.parametrize("profile", OLD)
def test_acl_apis_v0_see_only_literal_patterns(profile):
    cluster = _cluster(profile, secured=True)
    assert cluster.authorizer is not None
    created = call(cluster, CreateAclsRequest(creations=[_creation("t1"), _creation("t2")]), 0, principal=ADMIN)
    assert [r.error_code for r in created.results] == [0, 0]
    assert {a.pattern_type for a in cluster.authorizer} == {PatternType.LITERAL}
    cluster.authorizer.add(acl("User:bob", AclOperation.READ, ResourceType.TOPIC, "t", PatternType.PREFIXED))
    described = call(cluster, _acl_filter(DescribeAclsRequest), 0, principal=ADMIN)
    assert described.error_code == 0
    assert sorted(r.resource_name for r in described.resources) == ["t1", "t2"]
    deleted = call(cluster, DeleteAclsRequest(filters=[_acl_filter(DeleteAclsRequest.DeleteAclsFilter)]), 0,
                   principal=ADMIN)
    assert sorted(m.resource_name for m in deleted.filter_results[0].matching_acls) == ["t1", "t2"]
    assert [a.pattern_type for a in cluster.authorizer] == [PatternType.PREFIXED]
    refused = call(cluster, _acl_filter(DescribeAclsRequest), 0, principal="User:alice")
    assert refused.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED


# --- DescribeLogDirs v0 ------------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", OLD)
def test_describe_log_dirs_v0_describes_the_partitions(profile):
    cluster = _cluster(profile)
    _produce(cluster, [b"x" * 100])
    answer = call(cluster, DescribeLogDirsRequest(topics=None), 0)
    [result] = answer.results
    sizes = {(t.name, p.partition_index): p.partition_size for t in result.topics for p in t.partitions}
    assert result.error_code == 0 and sizes[(TOPIC, 1)] == 0 and sizes[(TOPIC, 0)] > 100


# --- Fetch v0-3: down-conversion to message formats 0 and 1 ---------------------------------------------------

def _fetch(offset: int = 0, partition_max_bytes: int = 1 << 20, topic: str = TOPIC, max_wait_ms: int = 0) -> Any:
    part = FetchRequest.FetchTopic.FetchPartition(partition=0, fetch_offset=offset,
                                                  partition_max_bytes=partition_max_bytes)
    return FetchRequest(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=1 << 30,
                        topics=[FetchRequest.FetchTopic(topic=topic, partitions=[part])])


def _fetched(cluster: Cluster, version: int, **kwargs: Any) -> Any:
    answer = call(cluster, _fetch(**kwargs), version)
    [topic] = answer.responses
    [partition] = topic.partitions
    return partition


def _legacy(data: bytes) -> list[Any]:
    """The messages of a magic 0/1 message set, read by kafka-python's own legacy reader (inner ones of
    compressed wrappers included); each as (magic, offset, timestamp, key, value)."""
    out = []
    batches = MemoryRecords(data)
    while batches.has_next():
        batch = batches.next_batch()
        if batch is None:
            break
        out += [(batch.magic, r.offset, r.timestamp, r.key, r.value) for r in batch]
    return out


def _append(cluster: Cluster, batch: bytes, partition: int = 0) -> None:
    """Append a batch to the log directly (markers and timestamp types a plain Produce does not make)."""
    log = cluster.topics[TOPIC].partitions[partition].log
    data = bytearray(batch)
    log.append(data, records.read_header(data))
    log.announce_append(len(data))


# an answer with nothing to convert: offset -1 and a length past the answer (61, a batch header's)
OVERFLOW_ONLY = struct.pack(">qi", -1, 61)
CODECS = [records.COMPRESSION_NONE, records.COMPRESSION_GZIP, records.COMPRESSION_SNAPPY, records.COMPRESSION_LZ4]


@pytest.mark.parametrize("profile", OLD)
@pytest.mark.parametrize("version", [0, 1, 2, 3])
@pytest.mark.parametrize("codec", CODECS, ids=[records.COMPRESSION_NAMES[c] for c in CODECS])
def test_fetch_v0_to_v3_down_converts_batches_to_messages(profile, version, codec):
    cluster = _cluster(profile)
    magic = 0 if version <= 1 else 1
    for first in (0, 3):
        batch = records.build_batch([(b"k%d" % i, b"v%d" % i) for i in range(first, first + 3)],
                                    timestamps=[NOW + i for i in range(first, first + 3)], compression=codec,
                                    headers=[[("h", b"x")]] * 3)
        _append(cluster, batch)
    partition = _fetched(cluster, version)
    assert (partition.error_code, partition.high_watermark) == (0, 6)
    if magic == 0 and codec == records.COMPRESSION_LZ4:
        _check_kafka_0_8_lz4(partition.records)
        return
    # as an old client does: fetch again after the last whole message (a cut one is dropped by the reader)
    found = _legacy(partition.records)
    while found[-1][1] < 5:
        after = found[-1][1]
        found += [m for m in _legacy(_fetched(cluster, version, offset=after + 1).records) if m[1] > after]
    stamps = [NOW + i if magic else None for i in range(6)]
    assert found == [(magic, i, stamps[i], b"k%d" % i, b"v%d" % i) for i in range(6)]
    if codec != records.COMPRESSION_NONE:
        # one wrapper message per batch, compressed with the batch's codec, at its last offset
        wrappers = MemoryRecords(partition.records)
        first_wrapper = wrappers.next_batch()
        assert first_wrapper.compression_type == codec and first_wrapper._offset == 2


def _check_kafka_0_8_lz4(data: bytes) -> None:
    """A magic 0 LZ4 wrapper carries Kafka 0.8's header checksum (kafka-python reads it only with xxhash,
    not installed here): check that checksum, then read the wrapper with the Produce v0 reader."""
    size = int.from_bytes(data[8:12], "big")
    wrapper = data[:12 + size]
    frame = wrapper[12 + 4 + 2 + 4 + 4:]  # crc, magic, attributes, null key, value length
    assert wrapper[17] == records.COMPRESSION_LZ4 and frame[:4] == b"\x04\x22\x4d\x18"
    assert frame[6] == (compression.xxh32_short(frame[:6]) >> 8) & 0xFF \
        != (compression.xxh32_short(frame[4:6]) >> 8) & 0xFF
    batch = log_validator.convert_legacy_message_set(wrapper)
    assert [(r.key, r.value) for r in records.iter_records(batch)] == [(b"k%d" % i, b"v%d" % i) for i in range(3)]


@pytest.mark.parametrize("version", [1, 3])
def test_fetch_from_inside_a_batch_drops_earlier_uncompressed_records_only(version):
    cluster = _cluster("3.9")
    _append(cluster, records.build_batch([(None, b"a"), (None, b"b"), (None, b"c")], timestamp=NOW))
    _append(cluster, records.build_batch([(None, b"d"), (None, b"e")], timestamp=NOW,
                                         compression=records.COMPRESSION_GZIP))
    assert [r[1] for r in _legacy(_fetched(cluster, version, offset=1).records)] == [1, 2, 3, 4]
    # a compressed wrapper holds all of its batch's records: the client skips those below its offset
    assert [r[1] for r in _legacy(_fetched(cluster, version, offset=4).records)] == [3, 4]


def test_log_append_time_becomes_the_magic_1_timestamp_and_its_attribute():
    cluster = _cluster("3.9")
    batch = bytearray(records.build_batch([(None, b"a"), (None, b"b")], timestamp=NOW))
    records.set_log_append_time(batch, NOW + 500)
    _append(cluster, bytes(batch))
    data = _fetched(cluster, 2).records
    assert [(r[2]) for r in _legacy(data)] == [NOW + 500, NOW + 500]
    assert data[12 + 4 + 1] & legacy_records.LEGACY_ATTR_LOG_APPEND_TIME  # the first message's attributes


def test_control_batches_are_dropped_and_the_answer_padded_to_its_announced_size():
    cluster = _cluster("3.9")
    _append(cluster, records.build_batch([(None, b"t1"), (None, b"t2")], timestamp=NOW, producer_id=7,
                                         producer_epoch=0, base_sequence=0, transactional=True))
    marker = records.build_end_txn_marker(7, 0, committed=True, coordinator_epoch=0, timestamp=NOW)
    _append(cluster, marker)
    stored = sum(len(b) for b in cluster.topics[TOPIC].partitions[0].log.batches)
    data = _fetched(cluster, 3).records
    assert [r[4] for r in _legacy(data)] == [b"t1", b"t2"]  # no control record; READ_UNCOMMITTED
    # LazyDownConversionRecords sends the stored size: what conversion saved is an overflow entry at offset -1
    assert len(data) == stored
    converted = legacy_records.down_convert_batch(cluster.topics[TOPIC].partitions[0].log.batches[0], 1, 0)
    overflow = data[len(converted):]
    assert overflow[:8] == b"\xff" * 8 and int.from_bytes(overflow[8:12], "big") > len(overflow)
    # only a marker left, or nothing at all: a lone overflow entry header (LazyDownConversionRecords)
    assert _fetched(cluster, 3, offset=2).records == OVERFLOW_ONLY
    assert _fetched(cluster, 0, offset=3).records == OVERFLOW_ONLY
    # a marker first: the batch after it is sent first and then again, as Kafka 3.9 sends it
    _append(cluster, records.build_batch([(None, b"t3")], timestamp=NOW))
    assert [r[1] for r in _legacy(_fetched(cluster, 3, offset=2).records)] == [3, 3]


def test_a_zstd_batch_after_the_first_converted_one_becomes_overflow():
    cluster = _cluster("3.9")
    _append(cluster, records.build_batch([(None, b"a")], timestamp=NOW))
    _append(cluster, records.build_batch([(None, b"z")], timestamp=NOW, compression=records.COMPRESSION_ZSTD))
    partition = _fetched(cluster, 2)
    assert partition.error_code == 0 and [r[4] for r in _legacy(partition.records)] == [b"a"]
    assert _fetched(cluster, 2, offset=1).error_code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE


def test_a_larger_conversion_is_cut_to_the_announced_size_leaving_a_partial_message():
    cluster = _cluster("3.9")
    values: list[tuple[bytes | None, bytes | None]] = [(b"k", b"v%d" % i) for i in range(50)]
    _append(cluster, records.build_batch(values[:1], timestamp=NOW))
    _append(cluster, records.build_batch(values[1:], timestamp=NOW))
    log = cluster.topics[TOPIC].partitions[0].log
    stored = sum(len(b) for b in log.batches)
    whole = b"".join(legacy_records.down_convert_batch(b, 1, 0) for b in log.batches)
    data = _fetched(cluster, 3).records
    assert len(whole) > stored and len(data) == stored and whole.startswith(data)
    got = _legacy(data)
    assert [m[1] for m in got] == list(range(len(got))) and 1 < len(got) < 50
    # a first batch converting to more than the stored size is sent whole (at least one batch, KIP-283)
    second = log.batches[1]
    assert len(legacy_records.down_convert([second], 1, 0)) \
        == len(legacy_records.down_convert_batch(second, 1, 0)) > len(second)


@pytest.mark.parametrize("version", [2, 3])
def test_only_fetch_v3_returns_a_first_batch_larger_than_the_partition_limit(version):
    cluster = _cluster("3.9")
    _append(cluster, records.build_batch([(None, b"x" * 100)] * 3, timestamp=NOW))
    data = _fetched(cluster, version, partition_max_bytes=50).records
    if version == 2:
        assert data == OVERFLOW_ONLY  # the client must raise its fetch size
    else:
        assert len(_legacy(data)) == 3


def test_zstd_cannot_be_fetched_below_v10():
    cluster = _cluster("3.9")
    _append(cluster, records.build_batch([(None, b"z")], timestamp=NOW, compression=records.COMPRESSION_ZSTD))
    partition = _fetched(cluster, 3)
    assert (partition.error_code, partition.high_watermark, partition.records) == (
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, -1, b"")
    # KafkaApis.maybeConvertFetchedData: from the topic's compression.type, for every version before 10
    cluster.create_topic("zstd", 1, configs={"compression.type": "zstd"})
    for version in (3, 4, 9):
        assert _fetched(cluster, version, topic="zstd").error_code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert _fetched(cluster, 10, topic="zstd").error_code == 0


def test_errors_at_fetch_v0_convert_only_where_the_node_has_the_log():
    cluster = _cluster("2.8")
    unknown = _fetched(cluster, 0, topic="nope")
    assert (unknown.error_code, unknown.records) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, b"")
    # the partition's log is here: its (empty) records go through down-conversion too
    out_of_range = _fetched(cluster, 0, offset=5)
    assert (out_of_range.error_code, out_of_range.records) == (ErrorCode.OFFSET_OUT_OF_RANGE, OVERFLOW_ONLY)


def test_a_refused_partition_is_converted_too():
    cluster = _cluster("3.9", secured=True)
    cluster.create_topic("zstd", 1, configs={"compression.type": "zstd"})
    refused = _fetched(cluster, 3)
    assert (refused.error_code, refused.records) == (ErrorCode.TOPIC_AUTHORIZATION_FAILED, OVERFLOW_ONLY)
    # maybeConvertFetchedData answers for the topic's compression.type over the authorization error
    assert _fetched(cluster, 3, topic="zstd").error_code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    allow(cluster, "User:alice", AclOperation.READ, ResourceType.TOPIC, TOPIC)
    assert _fetched(cluster, 3).error_code == 0


def _raw_answer(cluster: Cluster, request: Any, version: int) -> bytes:
    """The answer's bytes after the size and correlation id, as a client reads them."""
    frame = WireClient.__new__(WireClient)
    frame.client_id, frame._correlation_id = "old-versions", 0
    outcome = handle_frame(memoryview(bytearray(frame.encode_request(request, version)[4:])), cluster,
                           cluster.nodes[0], Session(client_host="/127.0.0.1", listener="PLAINTEXT",
                                                     principal="User:alice"))
    assert isinstance(outcome, Reply)
    raw = outcome.data if isinstance(outcome.data, bytes) else b"".join(bytes(part) for part in outcome.data)
    return raw[8:]


def test_fetch_v0_answer_bytes_by_hand():
    """Decoded with struct, not with the schema engine that encoded it: no throttle time in v0, then
    [topic name, [partition, error code, high watermark, message set]]."""
    cluster = _cluster("3.9")
    _append(cluster, records.build_batch([(b"k", b"v")], timestamp=NOW))
    raw = _raw_answer(cluster, _fetch(), 0)
    # a magic 0 message: crc32 of what follows, magic 0, attributes 0, key, value (no timestamp)
    body = b"\x00\x00" + struct.pack(">i", 1) + b"k" + struct.pack(">i", 1) + b"v"
    message = struct.pack(">I", zlib.crc32(body)) + body
    message_set = struct.pack(">qi", 0, len(message)) + message
    # padded to the stored batch's size with an entry at offset -1 that claims more than is left
    stored = len(cluster.topics[TOPIC].partitions[0].log.batches[0])
    left = stored - len(message_set)
    padding = (struct.pack(">qi", -1, max(left + 1, 61)) + bytes(left))[:left]
    assert raw == (struct.pack(">ih", 1, len(TOPIC)) + TOPIC.encode()
                   + struct.pack(">iihqi", 1, 0, 0, 1, stored) + message_set + padding)


def test_offset_for_leader_epoch_v0_answer_bytes_by_hand():
    """v0 answers [topic, [error code, partition, end offset]]: no throttle time, no leader epoch."""
    cluster = _cluster("3.9")
    _produce(cluster, [b"a", b"b"])
    topic = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
    request = OffsetForLeaderEpochRequest(topics=[topic(topic=TOPIC, partitions=[
        topic.OffsetForLeaderPartition(partition=0, leader_epoch=0)])])
    assert _raw_answer(cluster, request, 0) == (struct.pack(">ih", 1, len(TOPIC)) + TOPIC.encode()
                                                + struct.pack(">ihiq", 1, 0, 0, 2))


# --- Kafka 4 refuses them all ------------------------------------------------------------------------------

REMOVED = [
    (_fetch, 0), (_fetch, 1), (_fetch, 2), (_fetch, 3),
    (lambda: _commit(1), 0), (lambda: _commit(1), 1), (_fetch_offsets, 0),
    (lambda: OffsetForLeaderEpochRequest(topics=[]), 0), (lambda: OffsetForLeaderEpochRequest(topics=[]), 1),
    (lambda: CreateAclsRequest(creations=[]), 0), (lambda: _acl_filter(DescribeAclsRequest), 0),
    (lambda: DeleteAclsRequest(filters=[]), 0), (lambda: DescribeLogDirsRequest(topics=None), 0),
]


@pytest.mark.parametrize("profile", NEW)
@pytest.mark.parametrize(("request_of", "version"), REMOVED,
                         ids=[f"{make().__class__.__name__}-v{v}" for make, v in REMOVED])
def test_kafka_4_refuses_the_versions_it_removed(profile, request_of, version):
    cluster = _cluster(profile, secured=True)
    with pytest.raises(CloseConnection):
        call(cluster, request_of(), version, principal=ADMIN)


# --- old message sets are never transactional, whatever their bytes --------------------------------------------

def _timestamp_with_byte_22(bit_set: bool) -> int:
    """A magic 1 message's timestamp fills bytes 18-25 of its entry; byte 22 carries bits 24-31 of it, so
    whether bit 0x10 of that byte is set (a v2 batch's transactional flag) flips every 3.1 days."""
    return (NOW & ~(0xFF << 24)) | ((0x10 if bit_set else 0x00) << 24)


@pytest.mark.parametrize("bit_set", [False, True])
@pytest.mark.parametrize(("version", "magic"), [(0, 0), (1, 0), (2, 1)])
def test_an_old_message_set_is_appended_whatever_its_byte_22(version, magic, bit_set):
    """Kafka's RequestUtils.flag asks only magic 2 batches whether they are transactional: a legacy set with
    bit 0x10 in byte 22 (the timestamp for magic 1, the key's first byte for magic 0) is appended as any other."""
    cluster = _cluster("3.9")
    timestamp = _timestamp_with_byte_22(bit_set)
    key = (b"\x10" if bit_set else b"\x01") + b"key-long-enough-for-61-bytes" * 2
    entries = b"".join(legacy_records.legacy_entry(i, magic, 0, timestamp, key, b"value-%d" % i) for i in range(2))
    assert len(entries) >= records.HEADER_SIZE and bool(entries[22] & records.ATTR_TRANSACTIONAL) is bit_set
    answer = call(cluster, ProduceRequest(transactional_id=None, acks=-1, timeout_ms=1000, topic_data=[
        ProduceRequest.TopicProduceData(name=TOPIC, partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=entries)])]), version)
    assert answer.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    stored = cluster.topics[TOPIC].partitions[0].log.batches
    assert [(r.key, r.value) for batch in stored for r in records.iter_records(batch)] == [
        (key, b"value-0"), (key, b"value-1")]
    assert not any(records.read_header(batch).is_transactional for batch in stored)
