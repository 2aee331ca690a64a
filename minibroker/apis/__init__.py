"""One module per Kafka API; each declares the versions it serves and one `handle`.

The registry finds the handler modules itself: every module of this package whose top level assigns
`API_KEY` is one, and its declaration (versions, optional lower bounds, optional encoders) is read once
into an `ApiDeclaration`. Two modules with one key fail the import.

A handler module is imported when its API is first used (`API_MODULES[key]`): importing one creates the message
classes it names, so a broker imports only the APIs its clients call. Its versions are read from its source
until then, where it writes them as literals (`API_KEY = 3`, `MIN_VERSION, MAX_VERSION = 0, 12`); a module that
writes one otherwise is imported at once.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ..protocol.first_use import LoadedOnFirstUse
from . import api_versions  # the one handler named here: it answers with the ranges below
from .releases import LATEST, release, served_range

# Read from the source, not by importing: modules that use the registry (dispatch) cannot be imported while it
# is being built, and a handler module is imported only when its API is first used. (A line is found by the
# newline before it, which the engine searches for far faster than for `^`: a file is read with one before it.)
_DEFINES_API_KEY = re.compile(rb"\nAPI_KEY\s*[:=]")
_REQUIRED = {b"API_KEY", b"MIN_VERSION", b"MAX_VERSION"}
_VERSION_NAMES = {*_REQUIRED, b"ADVERTISED_MIN_VERSION", b"PRE_KIP896_MIN_VERSION"}
# a top-level assignment to upper-case names: the names, and the numbers assigned when they are literals
# (`NAME = 3`, `NAME, OTHER = 0, 12`, an end-of-line comment allowed)
_ASSIGNMENT = re.compile(rb"\n([A-Z_][A-Z0-9_]*(?:[ \t]*,[ \t]*[A-Z_][A-Z0-9_]*)*)[ \t]*(?::[^=\n]*)?=(?!=)"
                         rb"(?:[ \t]*(\d+(?:, \d+)*)[ \t]*(?:#.*)?$)?", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ApiDeclaration:
    """What one API module declares: its key, the versions it implements and its optional parts."""

    key: int
    min_version: int
    max_version: int
    # advertised below min_version but refused there (Produce v0-2 on Kafka 4: KAFKA-18659); None: not declared
    advertised_min_version: int | None
    # the lowest version served to releases before 4.0, whose old versions KIP-896 removed; None: not declared
    pre_kip896_min_version: int | None
    # the module, imported on the first call
    module: Callable[[], ModuleType] = field(compare=False, repr=False)

    @classmethod
    def of(cls, module: ModuleType) -> ApiDeclaration:
        """The declaration a module makes with its top-level names."""
        names = vars(module)
        return cls(int(names["API_KEY"]), int(names["MIN_VERSION"]), int(names["MAX_VERSION"]),
                   names.get("ADVERTISED_MIN_VERSION"), names.get("PRE_KIP896_MIN_VERSION"), lambda: module)

    @property
    def encode_body(self) -> Callable[[Any, int], bytes | None] | None:
        """Writes the common answers itself (Produce); None hands every answer to the codec."""
        return vars(self.module()).get("encode_body")

    @property
    def stored_batch_holders(self) -> Callable[[Any], list[Any]] | None:
        """The response's holders of stored record batches, sent without a copy (Fetch)."""
        return vars(self.module()).get("stored_batch_holders")

    def lowest_served(self, kip896: bool) -> int:
        """The lowest version a node serves: releases before 4.0 (no KIP-896) still served the removed ones."""
        if not kip896 and self.pre_kip896_min_version is not None:
            return self.pre_kip896_min_version
        return self.min_version

    def lowest_advertised(self, kip896: bool) -> int:
        """The lowest version a node advertises, which may be below what it serves."""
        advertised = self.min_version if self.advertised_min_version is None else self.advertised_min_version
        return min(advertised, self.lowest_served(kip896))


def _by_key(declarations: Iterable[tuple[str, ApiDeclaration]]) -> dict[int, tuple[str, ApiDeclaration]]:
    """Each module's declaration by API key, in key order; ImportError when two modules declare one key."""
    found: dict[int, tuple[str, ApiDeclaration]] = {}
    for name, declaration in declarations:
        if declaration.key in found:
            raise ImportError(f"API key {declaration.key} is declared by both {found[declaration.key][0]} and {name}")
        found[declaration.key] = (name, declaration)
    return dict(sorted(found.items()))


def declare(modules: Iterable[ModuleType]) -> dict[int, tuple[ModuleType, ApiDeclaration]]:
    """Each module's declaration by API key, in key order; ImportError when two modules declare one key."""
    found = _by_key((module.__name__, ApiDeclaration.of(module)) for module in modules)
    return {key: (declaration.module(), declaration) for key, (_, declaration) in found.items()}


def _declared_in_source(name: str, source: bytes) -> ApiDeclaration:
    """A handler module's declaration read from its source; the module imported where the source does not assign
    each of its version names once, as a literal."""
    literal: dict[bytes, int] = {}
    assigned: list[bytes] = []
    for targets, numbers in _ASSIGNMENT.findall(source):
        names = [target.strip() for target in targets.split(b",")]
        assigned += names
        values = numbers.split(b", ") if numbers else []
        if len(values) == len(names):
            literal.update(zip(names, map(int, values), strict=True))
    ours = [target for target in assigned if target in _VERSION_NAMES]
    if len(ours) != len(set(ours)) or not set(ours) <= literal.keys() or not _REQUIRED <= literal.keys():
        return ApiDeclaration.of(importlib.import_module(name))
    return ApiDeclaration(literal[b"API_KEY"], literal[b"MIN_VERSION"], literal[b"MAX_VERSION"],
                          literal.get(b"ADVERTISED_MIN_VERSION"), literal.get(b"PRE_KIP896_MIN_VERSION"),
                          functools.partial(importlib.import_module, name))


def _handler_declarations() -> Iterator[tuple[str, ApiDeclaration]]:
    """The package's modules that define API_KEY, by name, with their declarations."""
    directory = os.path.dirname(__file__)
    for file_name in sorted(os.listdir(directory)):  # os and open: a third of the time of pkgutil and pathlib
        if not file_name.endswith(".py") or file_name == "__init__.py":
            continue
        with open(os.path.join(directory, file_name), "rb") as file:
            source = b"\n" + file.read()
        if _DEFINES_API_KEY.search(source):
            name = f"{__name__}.{file_name.removesuffix('.py')}"
            yield name, _declared_in_source(name, source)


_DECLARED = _by_key(_handler_declarations())
API_DECLARATIONS: dict[int, ApiDeclaration] = {key: declaration for key, (_, declaration) in _DECLARED.items()}
# The handler module's own name of each API key (`produce`, `fetch`...), known without importing it
API_MODULE_NAMES: dict[int, str] = {key: name.rsplit(".", 1)[1] for key, (name, _) in _DECLARED.items()}
# The handler module of each API key, imported on first lookup
API_MODULES: Mapping[int, ModuleType] = LoadedOnFirstUse(API_DECLARATIONS, lambda key: API_DECLARATIONS[key].module())


@functools.cache
def advertised_ranges(release_name: str = LATEST) -> list[tuple[int, int, int]]:
    """(api key, min, max) for each API a node of this release serves: the modules' own declarations,
    narrowed to the release's ranges (see releases.py)."""
    kip896 = release(release_name).kip896
    ranges = []
    for key, declaration in API_DECLARATIONS.items():
        served = served_range(release_name, key, (declaration.lowest_advertised(kip896), declaration.max_version))
        if served is not None:
            ranges.append((key, *served))
    return ranges


@functools.cache
def accepted_versions(release_name: str) -> dict[int, tuple[int, int]]:
    """Per API key, the versions a node of this release handles (advertised and implemented)."""
    kip896 = release(release_name).kip896
    return {key: (max(low, API_DECLARATIONS[key].lowest_served(kip896)), high)
            for key, low, high in advertised_ranges(release_name)}


api_versions.answer_with(advertised_ranges)
