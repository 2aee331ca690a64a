"""The transition tables of the state machines (core/transitions.py): each allowed step is walked by driving the real
machine, every step the machine took is in its table, and a step outside it raises IllegalTransition."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from minibroker.core.clock import ManualClock
from minibroker.core.credentials import CredentialStore, scram_from_password
from minibroker.core.transitions import EventTable, IllegalTransition, PreviousStates
from minibroker.protocol.messages import (
    ApiVersionsRequest,
    MetadataRequest,
    SaslAuthenticateRequest,
    SaslHandshakeRequest,
)
from minibroker.server import authenticator as sasl
from minibroker.server import connection as conn
from minibroker.server.sasl.mechanism import SaslServerConfig


def test_event_table_and_previous_states_refuse_what_they_do_not_list() -> None:
    table: EventTable[str, str] = EventTable("door", {"shut": {"open": "opened"}, "opened": {"close": "shut"}})
    assert table.next("shut", "open") == "opened"
    with pytest.raises(IllegalTransition, match="door: 'close' is not allowed in state 'shut'"):
        table.next("shut", "close")
    previous: PreviousStates[str] = PreviousStates("door", {"opened": frozenset({"shut"}),
                                                            "shut": frozenset({"opened"})})
    assert previous.check("shut", "opened") == "opened"
    with pytest.raises(IllegalTransition, match="door: 'opened' cannot follow 'opened'"):
        previous.check("opened", "opened")


# -- the connection ---------------------------------------------------------------------------------------


class RecordedConnection(conn.Connection):
    """The real connection, noting each step it takes."""

    def __init__(self) -> None:
        self.steps: list[tuple[Any, Any, Any]] = []
        super().__init__(1000, ManualClock().now_ms)

    def _step(self, event: conn.ConnectionEvent) -> None:
        before = self.state
        super()._step(event)
        self.steps.append((before, event, self.state))


def frame(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


def test_the_connection_walks_every_transition() -> None:
    walked: set[tuple[Any, Any, Any]] = set()
    # READING -REQUEST-> ANSWERING -ANSWER-> READING; queued requests are handed out from READING too
    c = RecordedConnection()
    c.receive_data(frame(b"one") + frame(b"two"))
    assert isinstance(c.next_event(), conn.Request)
    assert c.next_event() is conn.PAUSED  # "two" is queued behind "one"
    c.send_answer(b"1")
    assert isinstance(c.next_event(), conn.Request)
    c.send_answer(b"2")
    # READING -CLOSE-> CLOSED
    c.close("done")
    walked.update(c.steps)
    # ANSWERING -CLOSE-> CLOSED, then the request handed out before is answered: CLOSED -ANSWER-> CLOSED
    c = RecordedConnection()
    c.receive_data(frame(b"one"))
    assert isinstance(c.next_event(), conn.Request)
    c.close("dropped")
    c.send_answer(b"late")
    assert c.data_to_send() == []
    walked.update(c.steps)
    # a frame Kafka refuses closes from READING
    c = RecordedConnection()
    c.receive_data(struct.pack(">i", 1001))
    assert isinstance(c.next_event(), conn.Closed)
    walked.update(c.steps)
    assert walked == set(conn.TRANSITIONS.steps())


def test_the_connection_refuses_an_answer_to_nothing() -> None:
    c = RecordedConnection()
    with pytest.raises(IllegalTransition):
        c.send_answer(b"x")
    c.close("closed")
    with pytest.raises(IllegalTransition):
        c.send_answer(b"x")
    assert c.state is conn.ConnectionState.CLOSED


# -- the SASL exchange ------------------------------------------------------------------------------------

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="x" '
              'user_alice="secret";')


class RecordedAuthenticator(sasl.SaslAuthenticator):
    """The real authenticator, noting each step it takes."""

    def __init__(self, mechanisms: list[str]) -> None:
        self.steps: list[tuple[Any, Any, Any]] = []
        credentials = CredentialStore()
        credentials.set_plain_users_from_jaas(PLAIN_JAAS)
        credentials.put_scram("alice", "SCRAM-SHA-256", scram_from_password("secret", "SCRAM-SHA-256", 4096))
        clock = ManualClock()
        super().__init__(mechanisms, credentials, SaslServerConfig(clock=clock), clock.now_ms, 60_000,
                         lambda _frame: b"versions")

    def _step(self, event: sasl.SaslEvent) -> None:
        before = self.state
        super()._step(event)
        self.steps.append((before, event, self.state))


def request(message: Any, version: int) -> memoryview:
    flexible = type(message).flexible_version_q(version)
    header = struct.pack(">hhih", message.API_KEY, version, 1, 4) + b"test" + (b"\x00" if flexible else b"")
    return memoryview(header + bytes(message.encode(version=version)))


def handshake(mechanism: str = "PLAIN") -> memoryview:
    return request(SaslHandshakeRequest(mechanism=mechanism), 1)


def plain(password: str) -> memoryview:
    return request(SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00" + password.encode()), 2)


METADATA = request(MetadataRequest(topics=[]), 12)
API_VERSIONS = request(ApiVersionsRequest(), 0)


def exchange(frames: list[memoryview], mechanisms: tuple[str, ...] = ("PLAIN",)) -> RecordedAuthenticator:
    authenticator = RecordedAuthenticator(list(mechanisms))
    for one in frames:
        authenticator.receive(one)
    return authenticator


def test_the_sasl_exchange_walks_every_transition() -> None:
    runs = [
        # ApiVersions, handshake, success, re-authentication, success
        exchange([API_VERSIONS, handshake(), plain("secret"), handshake(), plain("secret")]),
        # handshake straight away, then a wrong password; a frame after the failure fails again
        exchange([handshake(), plain("wrong"), METADATA]),
        # another API before the handshake; ApiVersions twice
        exchange([METADATA]),
        exchange([API_VERSIONS, API_VERSIONS]),
        # a re-authentication asking for another mechanism fails on the frame after its handshake
        exchange([handshake(), plain("secret"), handshake("SCRAM-SHA-256"), METADATA],
                 mechanisms=("PLAIN", "SCRAM-SHA-256")),
    ]
    walked = {step for run in runs for step in run.steps}
    assert walked == set(sasl.TRANSITIONS.steps())
    assert [run.state for run in runs] == [sasl.SaslState.COMPLETE, *[sasl.SaslState.FAILED] * 4]


def test_a_failed_exchange_cannot_start_again() -> None:
    authenticator = exchange([handshake(), plain("wrong")])
    with pytest.raises(IllegalTransition):
        authenticator.receive(handshake())


# -- transactions (Kafka's TransactionState.validPreviousStates) -------------------------------------------


def test_transaction_states_follow_kafkas_valid_previous_states() -> None:
    from minibroker.core.transaction_coordinator import TRANSITIONS, TransactionMetadata, TxnState

    assert TRANSITIONS.table[TxnState.PREPARE_ABORT] == {
        TxnState.ONGOING, TxnState.PREPARE_EPOCH_FENCE, TxnState.EMPTY, TxnState.COMPLETE_COMMIT,
        TxnState.COMPLETE_ABORT}
    allowed = set(TRANSITIONS.steps())
    assert len(allowed) == 19
    for before in TxnState:
        for target in TxnState:
            txn = TransactionMetadata("t", 1, state=before)
            if (before, target) in allowed:
                txn.transition_to(target)
                assert txn.state is target
            else:
                with pytest.raises(IllegalTransition):
                    txn.transition_to(target)
                assert txn.state is before


def test_the_transaction_coordinator_steps_through_its_table(monkeypatch: pytest.MonkeyPatch) -> None:
    from minibroker.core import transaction_coordinator as tc
    from minibroker.core.cluster import Cluster
    from minibroker.core.config import BrokerConfig

    walked: set[tuple[Any, Any]] = set()

    class Recorded(PreviousStates[tc.TxnState]):
        def check(self, current: tc.TxnState, target: tc.TxnState) -> tc.TxnState:
            walked.add((current, target))
            return super().check(current, target)

    monkeypatch.setattr(tc, "TRANSITIONS", Recorded("transaction", tc.TRANSITIONS.table))
    clock = ManualClock()
    cluster = Cluster(BrokerConfig({"transactional.id.expiration.ms": "1000"}), clock)
    cluster.create_topic("t", 1)
    coordinator = cluster.transactions
    error, pid, epoch = coordinator.init_producer_id("a", 60_000, -1, -1)
    assert error == 0
    assert coordinator.add_partitions("a", pid, epoch, [("t", 0)]) == 0
    assert coordinator.end_txn("a", pid, epoch, committed=True) == 0
    assert coordinator.add_partitions("a", pid, epoch, [("t", 0)]) == 0
    assert coordinator.end_txn("a", pid, epoch, committed=False) == 0
    assert coordinator.init_producer_id("a", 60_000, -1, -1)[0] == 0
    assert coordinator.add_partitions("a", pid, epoch + 1, [("t", 0)]) == 0
    clock.advance(61_000 + coordinator.config["transaction.abort.timed.out.transaction.cleanup.interval.ms"])
    coordinator.tick()  # the transaction timed out: fenced and aborted
    assert coordinator.transactions["a"].state is tc.TxnState.COMPLETE_ABORT
    clock.advance(coordinator.config["transaction.remove.expired.transaction.cleanup.interval.ms"])
    coordinator.tick()  # idle past transactional.id.expiration.ms
    assert "a" not in coordinator.transactions
    T = tc.TxnState
    assert walked == {(T.EMPTY, T.EMPTY), (T.EMPTY, T.ONGOING), (T.ONGOING, T.PREPARE_COMMIT),
                      (T.PREPARE_COMMIT, T.COMPLETE_COMMIT), (T.COMPLETE_COMMIT, T.ONGOING),
                      (T.ONGOING, T.PREPARE_ABORT), (T.PREPARE_ABORT, T.COMPLETE_ABORT), (T.COMPLETE_ABORT, T.EMPTY),
                      (T.ONGOING, T.PREPARE_EPOCH_FENCE), (T.PREPARE_EPOCH_FENCE, T.PREPARE_ABORT),
                      (T.COMPLETE_ABORT, T.DEAD)}


# -- classic groups (Kafka's ClassicGroupState.validPreviousStates) -----------------------------------------


def test_classic_group_states_follow_kafkas_valid_previous_states() -> None:
    from minibroker.core.classic_group import TRANSITIONS, Group, GroupState

    allowed = set(TRANSITIONS.steps())
    assert len(allowed) == 11
    for before in GroupState:
        for target in GroupState:
            group = Group("g", state=before)
            if (before, target) in allowed:
                group.transition_to(target)
                assert group.state is target
            else:
                with pytest.raises(IllegalTransition):
                    group.transition_to(target)
                assert group.state is before


def test_the_classic_coordinator_steps_through_its_table(monkeypatch: pytest.MonkeyPatch) -> None:
    from minibroker.core import classic_group
    from minibroker.core.classic_group import GroupState as G
    from minibroker.core.group_coordinator import GroupCoordinator
    from minibroker.core.pending import Pending
    from minibroker.testing import TEST_BROKER_CONFIG

    walked: set[tuple[Any, Any]] = set()

    class Recorded(PreviousStates[G]):
        def check(self, current: G, target: G) -> G:
            walked.add((current, target))
            return super().check(current, target)

    monkeypatch.setattr(classic_group, "TRANSITIONS", Recorded("classic group", classic_group.TRANSITIONS.table))
    from minibroker.core.config import BrokerConfig

    c = GroupCoordinator(BrokerConfig({**TEST_BROKER_CONFIG, "group.min.session.timeout.ms": "10"}), ManualClock(),
                         lambda topic, partition: topic == "t")

    def join(member_id: str = "") -> Any:
        result = c.join("g", member_id, None, "client", "/127.0.0.1", 1000, 5000, "consumer", [("range", b"r")],
                        require_known_member_id=False, supports_skip_assignment=True)
        assert isinstance(result, Pending)
        return result

    first = join().result()  # Empty -> PreparingRebalance -> CompletingRebalance
    c.sync("g", 1, first.member_id, None, None, None, [(first.member_id, b"a")])  # -> Stable
    second = join()  # a newcomer: Stable -> PreparingRebalance
    rejoined = join(first.member_id)
    assert second.done and rejoined.done  # -> CompletingRebalance
    # the leader never syncs: at the rebalance deadline CompletingRebalance -> PreparingRebalance
    c.clock.advance(5000)
    c.tick()
    c.clock.advance(5000)
    c.tick()  # nobody rejoined: PreparingRebalance -> Empty
    assert c.groups["g"].state is G.EMPTY
    assert c.delete_groups(["g"]) == [0] and "g" not in c.groups  # Empty -> Dead
    assert walked == {(G.EMPTY, G.PREPARING_REBALANCE), (G.PREPARING_REBALANCE, G.COMPLETING_REBALANCE),
                      (G.COMPLETING_REBALANCE, G.STABLE), (G.STABLE, G.PREPARING_REBALANCE),
                      (G.COMPLETING_REBALANCE, G.PREPARING_REBALANCE), (G.PREPARING_REBALANCE, G.EMPTY),
                      (G.EMPTY, G.DEAD)}
