"""Message classes for every API the broker speaks.

kafka-python's schema engine compiles Kafka's JSON definitions; it bundles
Kafka's files, and `schemas/` (installed as `minibroker.schemas`) adds the ones
we extend, such as Produce v14 for KIP-1269.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import (
    AlterConfigsRequest,
    AlterConfigsResponse,
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    DescribeClusterRequest,
    DescribeClusterResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    DescribeProducersRequest,
    DescribeProducersResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from kafka.protocol.admin.groups import (
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
)
from kafka.protocol.admin.transactions import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.metadata.find_coordinator import FindCoordinatorRequest, FindCoordinatorResponse
from kafka.protocol.producer import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)

import minibroker.schemas as _schemas


class ProduceRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
    """ProduceRequest 3-14; v14 is v13 again (KIP-1269)."""

    def expect_response(self) -> bool:
        return bool(self.acks != 0)


class ProduceResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
    """ProduceResponse 3-14; v14 adds tag 1 ProducerStateBatchesToRetain per partition."""


class DeleteGroupsRequest(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
    """DeleteGroupsRequest 0-3 (Kafka's definition; the bundled one stops at 2)."""


class DeleteGroupsResponse(ApiMessage, load_json=_schemas):  # type: ignore[call-arg]
    """DeleteGroupsResponse 0-3; v3 adds a per-group ErrorMessage."""


try:  # DescribeTopicPartitions lives in different modules across kafka-python releases
    from kafka.protocol.admin import (  # type: ignore[attr-defined]
        DescribeTopicPartitionsRequest,
        DescribeTopicPartitionsResponse,
    )
except ImportError:  # pragma: no cover - depends on the pinned kafka-python

    class DescribeTopicPartitionsRequest(ApiMessage):  # type: ignore[no-redef]
        """DescribeTopicPartitionsRequest 0."""

    class DescribeTopicPartitionsResponse(ApiMessage):  # type: ignore[no-redef]
        """DescribeTopicPartitionsResponse 0."""


MESSAGE_PAIRS: list[tuple[Any, Any]] = [
    (ProduceRequest, ProduceResponse),
    (FetchRequest, FetchResponse),
    (ListOffsetsRequest, ListOffsetsResponse),
    (MetadataRequest, MetadataResponse),
    (OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse),
    (ApiVersionsRequest, ApiVersionsResponse),
    (CreateTopicsRequest, CreateTopicsResponse),
    (DeleteTopicsRequest, DeleteTopicsResponse),
    (DeleteRecordsRequest, DeleteRecordsResponse),
    (InitProducerIdRequest, InitProducerIdResponse),
    (DescribeConfigsRequest, DescribeConfigsResponse),
    (AlterConfigsRequest, AlterConfigsResponse),
    (CreatePartitionsRequest, CreatePartitionsResponse),
    (IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse),
    (DescribeClusterRequest, DescribeClusterResponse),
    (DescribeProducersRequest, DescribeProducersResponse),
    (DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse),
    (FindCoordinatorRequest, FindCoordinatorResponse),
    (JoinGroupRequest, JoinGroupResponse),
    (SyncGroupRequest, SyncGroupResponse),
    (HeartbeatRequest, HeartbeatResponse),
    (LeaveGroupRequest, LeaveGroupResponse),
    (OffsetCommitRequest, OffsetCommitResponse),
    (OffsetFetchRequest, OffsetFetchResponse),
    (DescribeGroupsRequest, DescribeGroupsResponse),
    (ListGroupsRequest, ListGroupsResponse),
    (DeleteGroupsRequest, DeleteGroupsResponse),
    (OffsetDeleteRequest, OffsetDeleteResponse),
    (AddPartitionsToTxnRequest, AddPartitionsToTxnResponse),
    (AddOffsetsToTxnRequest, AddOffsetsToTxnResponse),
    (EndTxnRequest, EndTxnResponse),
    (TxnOffsetCommitRequest, TxnOffsetCommitResponse),
    (DescribeTransactionsRequest, DescribeTransactionsResponse),
    (ListTransactionsRequest, ListTransactionsResponse),
    (ElectLeadersRequest, ElectLeadersResponse),
    (AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse),
    (ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse),
]

REQUESTS: dict[int, Any] = {req.API_KEY: req for req, _ in MESSAGE_PAIRS}
RESPONSES: dict[int, Any] = {resp.API_KEY: resp for _, resp in MESSAGE_PAIRS}
