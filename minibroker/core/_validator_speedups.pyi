"""The record walk's fast lane in C (_validator_speedups.c); `log_validator._fast_lane` is its specification."""

def fast_lane(buf: bytes | bytearray | memoryview, pos: int, end: int, index: int, count: int, low: int, high: int,
              keyless: bool, /) -> tuple[int, int, int, int, bool]: ...
