"""ListPartitionReassignments (46): reassignments in progress.

Version 0, the only one. Mirrors ControllerApis.handleListPartitionReassignments; here reassignments complete
at once, so none is ever in progress.

Needs DESCRIBE on the cluster; a refused request is answered as
ListPartitionReassignmentsRequest.getErrorResponse answers it.
"""

from __future__ import annotations

from ..core.acls import AclOperation
from ..protocol.errors import ErrorCode
from ..protocol.messages import ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse
from .context import RequestContext

API_KEY = 46
MIN_VERSION, MAX_VERSION = 0, 0

_Topic = ListPartitionReassignmentsResponse.OngoingTopicReassignment
_Partition = _Topic.OngoingPartitionReassignment


def handle(request: ListPartitionReassignmentsRequest, ctx: RequestContext) -> ListPartitionReassignmentsResponse:
    if not ctx.authorize_cluster(AclOperation.DESCRIBE):
        # every partition asked for, without replicas; Kafka's message is its ClusterAuthorizationException's
        # Java object dump, null lets the client show the error's own text
        topics = [_Topic(name=topic.name, partitions=[_Partition(partition_index=index, replicas=[],
                                                                 adding_replicas=[], removing_replicas=[])
                                                      for index in topic.partition_indexes])
                  for topic in request.topics or ()]
        return ListPartitionReassignmentsResponse(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                                  error_message=None, topics=topics)
    return ListPartitionReassignmentsResponse(throttle_time_ms=0, error_code=0, error_message=None, topics=[])
