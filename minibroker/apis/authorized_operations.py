"""Authorized-operation bitfields, as Kafka answers them with no authorizer configured.

Metadata (v8+), DescribeCluster, DescribeGroups (v3+) and DescribeTopicPartitions carry the ACL
operations the caller may perform on a resource as a 32-bit field, bit N set for AclOperation code N.
Without an authorizer Kafka's AuthHelper.authorizedOperations grants every operation the resource
type supports (AclEntry.supportedOperations); when the request does not ask, the field keeps its
schema default, Integer.MIN_VALUE.
"""

from __future__ import annotations

from enum import IntEnum


class AclOperation(IntEnum):
    """org.apache.kafka.common.acl.AclOperation codes."""

    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12


# The protocol engine reads these fields as the set of operation codes, None for Integer.MIN_VALUE;
# DescribeTopicPartitions keeps the plain int32 (to_32bit_field).
NOT_REQUESTED = None


def to_32bit_field(operations: frozenset[AclOperation]) -> int:
    """Utils.to32BitField: one bit per operation code."""
    return sum(1 << op for op in operations)


_A = AclOperation
# AclEntry.supportedOperations per resource type
TOPIC_OPERATIONS = frozenset({
    _A.READ, _A.WRITE, _A.CREATE, _A.DESCRIBE, _A.DELETE, _A.ALTER, _A.DESCRIBE_CONFIGS, _A.ALTER_CONFIGS})
GROUP_OPERATIONS = frozenset({_A.READ, _A.DESCRIBE, _A.DELETE, _A.DESCRIBE_CONFIGS, _A.ALTER_CONFIGS})
CLUSTER_OPERATIONS = frozenset({
    _A.CREATE, _A.CLUSTER_ACTION, _A.DESCRIBE_CONFIGS, _A.ALTER_CONFIGS, _A.IDEMPOTENT_WRITE, _A.ALTER, _A.DESCRIBE})
