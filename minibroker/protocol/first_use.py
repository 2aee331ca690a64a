"""A read-only mapping whose values are loaded on their first lookup (message classes, handler modules)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from typing import TypeVar

V = TypeVar("V")


class LoadedOnFirstUse(Mapping[int, V]):
    """`keys` known up front; `load(key)` runs on the key's first lookup and its value is kept."""

    def __init__(self, keys: Collection[int], load: Callable[[int], V]) -> None:
        self._keys = keys
        self._load = load
        self._loaded: dict[int, V] = {}

    def __getitem__(self, key: int) -> V:
        try:
            return self._loaded[key]
        except KeyError:
            if key not in self._keys:
                raise
            value = self._loaded[key] = self._load(key)
            return value

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[int]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)
