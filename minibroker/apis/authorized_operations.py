"""Authorized-operation fields: how Metadata, DescribeCluster, the group describes and DescribeTopicPartitions
carry them.

Each holds the ACL operations the caller may perform on a resource as a 32-bit field, bit N set for
AclOperation code N (AuthHelper.authorizedOperations over AclEntry.supportedOperations; every supported
operation without an authorizer: `RequestContext.authorized_operations`). When the request does not
ask, the field keeps its schema default, Integer.MIN_VALUE.
"""

from __future__ import annotations

from collections.abc import Iterable

# The protocol engine reads these fields as the set of operation codes, None for Integer.MIN_VALUE;
# DescribeTopicPartitions and the KIP-848-style group describes keep the plain int32 (to_32bit_field).
NOT_REQUESTED = None
NOT_REQUESTED_INT32 = -(2**31)


def to_32bit_field(operations: Iterable[int]) -> int:
    """Utils.to32BitField: one bit per operation code."""
    return sum(1 << op for op in set(operations))
