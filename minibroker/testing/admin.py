"""Create and delete topics over the wire (CreateTopics v7, DeleteTopics v6), as Kafka's Admin client does.

Fixtures use this for both the in-process and the subprocess broker, so a topic a test asks for
passes the same validation as one a client creates: a bad config gets Kafka's error and message.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
from collections.abc import Mapping
from typing import Any

from ..client.security import ClientSecurity
from ..protocol.errors import ErrorCode
from ..protocol.messages import CreateTopicsRequest, DeleteTopicsRequest
from .wire import WireClient

CREATE_TOPICS_VERSION = 7
DELETE_TOPICS_VERSION = 6
TIMEOUT_MS = 30_000


class TopicError(RuntimeError):
    """The broker refused to create or delete a topic; carries Kafka's error code and message."""

    def __init__(self, action: str, topic: str, error_code: int, message: str | None) -> None:
        name = ErrorCode(error_code).name if error_code in ErrorCode._value2member_map_ else "UNKNOWN"
        super().__init__(f"{action} {topic!r}: {name} ({error_code}){': ' + message if message else ''}")
        self.error_code = error_code


class TopicAdmin:
    """One connection to the first bootstrap server, opened at first use; safe to share between threads.

    `security` (ClientSecurity.from_config of Kafka client settings) reaches a TLS or SASL listener.
    """

    def __init__(self, bootstrap_servers: str, client_id: str = "minibroker-fixtures",
                 security: ClientSecurity | None = None) -> None:
        host, _, port = bootstrap_servers.split(",")[0].rpartition(":")
        self._address = (host, int(port))
        self._client_id = client_id
        self._security = security
        self._wire: WireClient | None = None
        self._lock = threading.Lock()

    def create_topic(self, name: str, partitions: int = -1, config: Mapping[str, Any] | None = None,
                     replication_factor: int = -1) -> None:
        """Create `name`; -1 takes the broker's `num.partitions` / `default.replication.factor`."""
        configs = [CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(name=key, value=_config_value(value))
                   for key, value in (config or {}).items()]
        topic = CreateTopicsRequest.CreatableTopic(name=name, num_partitions=partitions,
                                                   replication_factor=replication_factor, assignments=[],
                                                   configs=configs)
        request = CreateTopicsRequest(topics=[topic], timeout_ms=TIMEOUT_MS, validate_only=False)
        result = self._request(request, CREATE_TOPICS_VERSION).topics[0]
        if result.error_code:
            raise TopicError("create topic", name, result.error_code, result.error_message)

    def delete_topic(self, name: str, missing_ok: bool = True) -> None:
        """Delete `name`; a topic already gone is fine unless `missing_ok` is false."""
        request = DeleteTopicsRequest(topics=[DeleteTopicsRequest.DeleteTopicState(name=name)],
                                      timeout_ms=TIMEOUT_MS)
        result = self._request(request, DELETE_TOPICS_VERSION).responses[0]
        if result.error_code and not (missing_ok and result.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION):
            raise TopicError("delete topic", name, result.error_code, result.error_message)

    def close(self) -> None:
        with self._lock:
            if self._wire is not None:
                self._wire.close()
                self._wire = None

    def _request(self, request: Any, version: int) -> Any:
        with self._lock:
            if self._wire is not None and _closed_by_peer(self._wire):
                self._wire.close()  # the broker closed it meanwhile (idle, or a test dropped connections)
                self._wire = None
            for attempt in (1, 2):
                if self._wire is None:
                    self._wire = WireClient(*self._address, client_id=self._client_id, security=self._security)
                try:
                    return self._wire.request(request, version)
                except (ConnectionResetError, BrokenPipeError):
                    # closed by the broker while idle, its close not seen yet: a dropped connection had not read
                    # the request, so it is sent once more on a new one, as a Kafka Admin retries
                    self._wire.close()
                    self._wire = None
                    if attempt == 2:
                        raise
                except OSError:
                    self._wire.close()  # the broker went away (a test stopped it): reconnect next time
                    self._wire = None
                    raise
            raise AssertionError("unreachable")


def _closed_by_peer(wire: WireClient) -> bool:
    """The broker has closed this idle connection: its end of stream (or a reset) is waiting to be read."""
    sock = wire.sock
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        if isinstance(sock, ssl.SSLSocket):
            return sock.pending() == 0 and sock.recv(1) == b""  # an idle TLS connection only gets close_notify
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ssl.SSLError):
        return True


def _config_value(value: Any) -> str | None:
    """Kafka's spelling of a Python value: True -> "true", None stays null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
