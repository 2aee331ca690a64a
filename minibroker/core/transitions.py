"""Explicit transition tables for the state machines (h11's `_state.py` model), and the error for a step not in one.

Two shapes, after their models: an event table, `{state: {event: next state}}`, as h11 keeps for its
connection (the connection and SASL exchange use it), and Kafka's `validPreviousStates`, `{state: states
it may be entered from}`, as its TransactionState and ClassicGroupState declare them (transactions and
classic groups). A step outside its table raises `IllegalTransition`: a bug here, never a client's doing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic, TypeVar

S = TypeVar("S")
E = TypeVar("E")


class IllegalTransition(RuntimeError):
    """A state machine was asked for a step its table does not allow (h11's LocalProtocolError)."""


class EventTable(Generic[S, E]):
    """`{state: {event: next state}}`: what each event does in each state; anything else is illegal."""

    def __init__(self, name: str, table: Mapping[S, Mapping[E, S]]) -> None:
        self.name = name
        self.table = table

    def next(self, state: S, event: E) -> S:
        """The state `event` leads to from `state`; IllegalTransition when the table has no such step."""
        try:
            return self.table[state][event]
        except KeyError:
            raise IllegalTransition(f"{self.name}: {event!r} is not allowed in state {state!r}") from None

    def steps(self) -> list[tuple[S, E, S]]:
        """Every allowed step, as (state, event, next state)."""
        return [(state, event, after) for state, events in self.table.items() for event, after in events.items()]


class PreviousStates(Generic[S]):
    """`{state: the states it may be entered from}` (Kafka's validPreviousStates)."""

    def __init__(self, name: str, table: Mapping[S, frozenset[S]]) -> None:
        self.name = name
        self.table = table

    def check(self, current: S, target: S) -> S:
        """`target`, when it may follow `current`; IllegalTransition otherwise."""
        if current not in self.table.get(target, frozenset()):
            raise IllegalTransition(f"{self.name}: {target!r} cannot follow {current!r}")
        return target

    def steps(self) -> list[tuple[S, S]]:
        """Every allowed step, as (from, to)."""
        return [(before, target) for target, befores in self.table.items() for before in befores]
