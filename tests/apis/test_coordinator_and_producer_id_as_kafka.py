"""FindCoordinator v4+ and an idempotent InitProducerId, answered as Apache Kafka 4.3.1 answers them (found by the
differential scenarios find_coordinator and init_producer_id_idempotent)."""

from __future__ import annotations

import pytest

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import Node
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import FindCoordinatorRequest, InitProducerIdRequest

from .authz import call_node as call

NOW = 1_700_000_000_000
INVALID_REQUEST_MESSAGE = ("This most likely occurs because of a request being malformed by the client library or the "
                           "message was sent to an incompatible broker. See the broker logs for more details.")


def cluster() -> Cluster:
    """One node, no authorizer."""
    return Cluster(BrokerConfig({"node.id": 1}), clock=ManualClock(NOW), nodes=[Node(1, "127.0.0.1", 9092)])


@pytest.mark.parametrize("version", [4, 5, 6])
@pytest.mark.parametrize("key_type", [0, 1])
def test_find_coordinator_v4_up_answers_each_key_with_an_empty_message(version: int, key_type: int) -> None:
    answer = call(cluster(), FindCoordinatorRequest(key_type=key_type, coordinator_keys=["a", "b"]), version)
    assert [(c.key, c.error_code, c.error_message, c.node_id) for c in answer.coordinators] == [
        ("a", 0, "", 1), ("b", 0, "", 1)]


@pytest.mark.parametrize("version", [4, 6])
def test_find_coordinator_v4_up_refuses_an_unknown_key_type_for_every_key_with_the_default_message(
        version: int) -> None:
    answer = call(cluster(), FindCoordinatorRequest(key_type=9, coordinator_keys=["a", "b"]), version)
    assert [(c.key, c.error_code, c.error_message, c.node_id, c.host, c.port) for c in answer.coordinators] == [
        (key, ErrorCode.INVALID_REQUEST, INVALID_REQUEST_MESSAGE, -1, "", -1) for key in ("a", "b")]


@pytest.mark.parametrize(("producer_id", "producer_epoch"), [(5, -1), (-1, 3)])
def test_idempotent_init_producer_id_refuses_an_id_without_an_epoch_or_an_epoch_without_an_id(
        producer_id: int, producer_epoch: int) -> None:
    c = cluster()
    answer = call(c, InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000,
                                           producer_id=producer_id, producer_epoch=producer_epoch), 5)
    assert (answer.error_code, answer.producer_id, answer.producer_epoch) == (ErrorCode.INVALID_REQUEST, -1, -1)
    # nothing was allocated: the next producer gets the id the refused request would have taken
    first = call(c, InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000), 0).producer_id
    assert first == call(cluster(), InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000),
                         0).producer_id


def test_idempotent_init_producer_id_with_an_id_and_epoch_gets_a_new_id_at_epoch_0() -> None:
    c = cluster()
    first = call(c, InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000), 0)
    again = call(c, InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000,
                                          producer_id=first.producer_id, producer_epoch=0), 5)
    assert (again.error_code, again.producer_epoch) == (0, 0) and again.producer_id != first.producer_id
