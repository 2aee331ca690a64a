"""What a handler knows about the request it serves."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..core.acls import CLUSTER_NAME, SUPPORTED_OPERATIONS, AclOperation, ResourceType
from ..core.cluster import Cluster
from ..core.cluster_model import Node
from .releases import release


@dataclass(slots=True)
class Session:
    """Who is on the other end of a connection: where from, through which listener, authenticated as whom."""

    client_host: str = ""  # as Kafka shows it, "/127.0.0.1"
    listener: str = "PLAINTEXT"
    principal: str = "User:ANONYMOUS"


@dataclass(slots=True)
class RequestContext:
    """The cluster, the node this listener speaks for, and the request header."""

    cluster: Cluster
    node: Node
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    client_host: str = ""
    listener: str = "PLAINTEXT"  # the listener the request came through: Metadata answers with its addresses
    principal: str = "User:ANONYMOUS"  # who the connection authenticated as (TLS or SASL)
    frame_owned: bool = False  # the request's bytes are its own: the log may keep a batch of them uncopied

    def address(self, node: Node) -> tuple[str, int]:
        """Where clients of this listener reach `node`."""
        return node.address(self.listener)

    # -- authorization (Kafka's AuthHelper): everything is allowed without `authorizer.class.name` ----------

    @property
    def host(self) -> str:
        """The client's address as ACLs name hosts: "127.0.0.1"."""
        return self.client_host.lstrip("/")

    def authorize(self, operation: AclOperation, resource_type: ResourceType, name: str) -> bool:
        """Whether the caller may perform `operation` on the resource."""
        authorizer = self.cluster.authorizer
        return authorizer is None or authorizer.authorize(self.principal, self.host, operation, resource_type, name)

    def authorize_cluster(self, operation: AclOperation) -> bool:
        """Whether the caller may perform `operation` on the cluster."""
        return self.authorize(operation, ResourceType.CLUSTER, CLUSTER_NAME)

    def authorized_names(self, operation: AclOperation, resource_type: ResourceType,
                         names: Iterable[str]) -> set[str]:
        """The names among `names` the caller may perform `operation` on (AuthHelper.filterByAuthorized)."""
        if self.cluster.authorizer is None:
            return set(names)
        return {name for name in set(names) if self.authorize(operation, resource_type, name)}

    def authorize_by_resource_type(self, operation: AclOperation, resource_type: ResourceType) -> bool:
        """Whether the caller may perform `operation` on some resource of `resource_type`."""
        authorizer = self.cluster.authorizer
        return authorizer is None or authorizer.authorize_by_resource_type(
            self.principal, self.host, operation, resource_type)

    def authorized_operations(self, resource_type: ResourceType, name: str) -> frozenset[AclOperation]:
        """What the caller may do to the resource, of the operations its type supports
        (AuthHelper.authorizedOperations); a group's as the node's release knew them."""
        supported = SUPPORTED_OPERATIONS[resource_type]
        if resource_type == ResourceType.GROUP and not release(self.node.release).group_config_operations:
            supported = supported - _GROUP_CONFIG_OPERATIONS
        authorizer = self.cluster.authorizer
        if authorizer is None:
            return supported
        return authorizer.authorized_operations(self.principal, self.host, resource_type, name) & supported


#: What Kafka 4.0 added to a group's operations (group configs); older releases do not report them
_GROUP_CONFIG_OPERATIONS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})


class CloseConnection(Exception):
    """Kafka would close this connection (bad header, unsupported version, acks=0 failure)."""
