"""`--fault` rules: drop or delay answers to chosen APIs from start-up, without a control client.

A rule is written `API:ACTION[:every=N]`, e.g. `produce:drop:every=7` (the
7th, 14th, ... Produce request is handled, then the connection is closed
without an answer, so the client retries a batch the broker already has) or
`produce:delay=300:every=3` (every 3rd Produce answer waits 300 ms). Rules are
given to `minibroker serve --fault RULE` (repeatable) or to `Broker(faults=...)`;
they become test-control rules that never run out (see control.py).
"""

from __future__ import annotations

from .control import Rule, api_key_of


def parse_fault(spec: str) -> Rule:
    """One `--fault` rule; ValueError says what is wrong."""
    parts = spec.split(":")
    try:
        api_key = api_key_of(parts[0]) if len(parts) >= 2 else None
    except ValueError:
        api_key = None
    if api_key is None:
        raise ValueError(f"fault rule {spec!r}: expected API:ACTION[:every=N] with API a snake_case API name")
    action, _, value = parts[1].partition("=")
    if action not in ("drop", "delay") or (action == "delay" and not value.isdigit()):
        raise ValueError(f"fault rule {spec!r}: ACTION is drop or delay=MS")
    every = 1
    for option in parts[2:]:
        key, _, number = option.partition("=")
        if key != "every" or not number.isdigit() or int(number) < 1:
            raise ValueError(f"fault rule {spec!r}: unknown option {option!r}")
        every = int(number)
    return Rule(api_key, action, count=None, every=every, delay_ms=int(value or 0))


def parse_faults(specs: list[str]) -> list[Rule]:
    return [parse_fault(spec) for spec in specs]
