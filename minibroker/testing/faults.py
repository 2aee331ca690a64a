"""Broker-side fault injection for tests: drop or delay responses to chosen APIs.

A rule is written `API:ACTION[:every=N]`, e.g. `produce:drop:every=7` (the
7th, 14th, ... Produce request is handled, then the connection is closed
without an answer, so the client retries a batch the broker already has) or
`produce:delay=300:every=3` (every 3rd Produce answer waits 300 ms). Rules are
given to `minibroker serve --fault RULE` (repeatable) or to `Broker(faults=...)`.
"""

from __future__ import annotations

from dataclasses import dataclass

API_NAMES = {"produce": 0, "fetch": 1, "list_offsets": 2, "metadata": 3, "init_producer_id": 22}


@dataclass
class FaultRule:
    """One rule: which API, what to do, and how often."""

    api_key: int
    action: str  # "drop" or "delay"
    every: int = 1
    delay_ms: int = 0
    seen: int = 0

    @classmethod
    def parse(cls, spec: str) -> FaultRule:
        parts = spec.split(":")
        if len(parts) < 2 or parts[0] not in API_NAMES:
            raise ValueError(f"fault rule {spec!r}: expected API:ACTION[:every=N] with API in {sorted(API_NAMES)}")
        action, _, value = parts[1].partition("=")
        if action not in ("drop", "delay") or (action == "delay" and not value.isdigit()):
            raise ValueError(f"fault rule {spec!r}: ACTION is drop or delay=MS")
        every = 1
        for option in parts[2:]:
            key, _, number = option.partition("=")
            if key != "every" or not number.isdigit() or int(number) < 1:
                raise ValueError(f"fault rule {spec!r}: unknown option {option!r}")
            every = int(number)
        return cls(API_NAMES[parts[0]], action, every, int(value or 0))


class Faults:
    """The active rules; the server asks `decide` before sending each response."""

    def __init__(self, rules: list[FaultRule] | None = None) -> None:
        self.rules = rules or []
        self.dropped = 0
        self.delayed = 0

    @classmethod
    def parse(cls, specs: list[str]) -> Faults:
        return cls([FaultRule.parse(spec) for spec in specs])

    def decide(self, api_key: int) -> FaultRule | None:
        """The rule that fires for this response, if any."""
        for rule in self.rules:
            if rule.api_key == api_key:
                rule.seen += 1
                if rule.seen % rule.every == 0:
                    if rule.action == "drop":
                        self.dropped += 1
                    else:
                        self.delayed += 1
                    return rule
        return None
