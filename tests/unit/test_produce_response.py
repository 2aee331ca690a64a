"""ProduceResponse written with struct (protocol/produce_response.py) is byte for byte the engine's encoding."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from minibroker.protocol.messages import ProduceResponse, quick_data
from minibroker.protocol.produce_response import encode_produce_response

_Topic = ProduceResponse.TopicProduceResponse
_Partition = _Topic.PartitionProduceResponse
_Leader = _Partition.LeaderIdAndEpoch
_Endpoint = ProduceResponse.NodeEndpoint

int16s = st.integers(-(2**15), 2**15 - 1)
int32s = st.integers(-(2**31), 2**31 - 1)
int64s = st.integers(-(2**63), 2**63 - 1)


@st.composite
def partitions(draw: st.DrawFn, version: int) -> object:
    fields = dict(index=draw(int32s), error_code=draw(int16s), base_offset=draw(int64s),
                  log_append_time_ms=draw(int64s), log_start_offset=draw(int64s), record_errors=[],
                  error_message=None)
    if version >= 14:
        fields["producer_state_batches_to_retain"] = draw(st.sampled_from([5, 6, 1000, 2**31 - 1, 0]))
    return _Partition(**fields)


@st.composite
def responses(draw: st.DrawFn, version: int) -> ProduceResponse:
    topics = []
    for _ in range(draw(st.integers(0, 3))):
        partition_list = draw(st.lists(partitions(version), max_size=4))
        if version >= 13:
            topics.append(_Topic(topic_id=uuid.UUID(int=draw(st.integers(0, 2**128 - 1))),
                                 partition_responses=partition_list))
        else:
            topics.append(_Topic(name=draw(st.text(max_size=300)), partition_responses=partition_list))
    return ProduceResponse(responses=topics, throttle_time_ms=draw(int32s), node_endpoints=[])


@settings(max_examples=40)
@given(data=st.data())
def test_every_version_matches_the_engine(data: st.DataObject) -> None:
    for version in range(3, 15):
        response = data.draw(responses(version))
        assert encode_produce_response(response, version) == bytes(response.encode(version=version)), version


def test_answers_the_fast_path_does_not_write_go_to_the_engine() -> None:
    def one(**extra: object) -> ProduceResponse:
        partition = _Partition(index=0, error_code=6, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1,
                               record_errors=[], error_message=None)
        for name, value in extra.items():
            setattr(partition, name, value)
        return ProduceResponse(responses=[_Topic(name="t", partition_responses=[partition])], throttle_time_ms=0,
                               node_endpoints=[])

    assert encode_produce_response(one(error_message="bad"), 11) is None
    assert encode_produce_response(one(record_errors=[_Partition.BatchIndexAndErrorMessage(
        batch_index=0, batch_index_error_message=None)]), 11) is None
    assert encode_produce_response(one(current_leader=_Leader(leader_id=2, leader_epoch=1)), 11) is None
    with_endpoint = one()
    with_endpoint.node_endpoints = [_Endpoint(node_id=2, host="h", port=1, rack=None)]
    assert encode_produce_response(with_endpoint, 11) is None
    assert encode_produce_response(one(current_leader=_Leader(leader_id=2, leader_epoch=1)), 9) is not None
    assert encode_produce_response(one(error_code=2), 11) is not None


def test_quick_data_builds_what_the_constructor_builds() -> None:
    values = dict(index=3, error_code=0, base_offset=42, log_append_time_ms=-1, log_start_offset=7,
                  record_errors=[], error_message=None)
    built, quick = _Partition(**values), quick_data(_Partition, **values)
    assert quick == built and repr(quick) == repr(built)
    assert (quick.current_leader, quick.producer_state_batches_to_retain, quick.tags) == (None, 5, None)
    for version in range(3, 15):
        key = {"topic_id": uuid.UUID(int=9)} if version >= 13 else {"name": "t"}
        expected = ProduceResponse(responses=[_Topic(**key, partition_responses=[built])], throttle_time_ms=0,
                                   node_endpoints=[])
        answer = quick_data(ProduceResponse, responses=[quick_data(_Topic, **key, partition_responses=[quick])],
                            throttle_time_ms=0, node_endpoints=[])
        assert bytes(answer.encode(version=version)) == bytes(expected.encode(version=version)), version
        assert encode_produce_response(answer, version) == bytes(expected.encode(version=version)), version
