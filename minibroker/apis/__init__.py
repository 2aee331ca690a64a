"""One module per Kafka API; each declares the versions it serves and one `handle`.

The registry finds the handler modules itself: every module of this package whose top level assigns
`API_KEY` is one, and its declaration (versions, optional lower bounds, optional encoders) is read once
into an `ApiDeclaration`. Two modules with one key fail the import.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from . import api_versions  # the one handler named here: it answers with the ranges below
from .releases import LATEST, release, served_range

# Read from the source, not by importing: modules that use the registry (dispatch) cannot be imported while it
# is being built, and only handler modules may be imported here.
_DEFINES_API_KEY = re.compile(rb"^API_KEY\s*[:=]", re.MULTILINE)


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
    # writes the common answers itself (Produce); None hands every answer to the codec
    encode_body: Callable[[Any, int], bytes | None] | None
    # the response's holders of stored record batches, sent without a copy (Fetch)
    stored_batch_holders: Callable[[Any], list[Any]] | None

    @classmethod
    def of(cls, module: ModuleType) -> ApiDeclaration:
        """The declaration a module makes with its top-level names."""
        names = vars(module)
        return cls(int(names["API_KEY"]), int(names["MIN_VERSION"]), int(names["MAX_VERSION"]),
                   names.get("ADVERTISED_MIN_VERSION"), names.get("PRE_KIP896_MIN_VERSION"),
                   names.get("encode_body"), names.get("stored_batch_holders"))

    def lowest_served(self, kip896: bool) -> int:
        """The lowest version a node serves: releases before 4.0 (no KIP-896) still served the removed ones."""
        if not kip896 and self.pre_kip896_min_version is not None:
            return self.pre_kip896_min_version
        return self.min_version

    def lowest_advertised(self, kip896: bool) -> int:
        """The lowest version a node advertises, which may be below what it serves."""
        advertised = self.min_version if self.advertised_min_version is None else self.advertised_min_version
        return min(advertised, self.lowest_served(kip896))


def declare(modules: Iterable[ModuleType]) -> dict[int, tuple[ModuleType, ApiDeclaration]]:
    """Each module's declaration by API key, in key order; ImportError when two modules declare one key."""
    found: dict[int, tuple[ModuleType, ApiDeclaration]] = {}
    for module in modules:
        declaration = ApiDeclaration.of(module)
        if declaration.key in found:
            raise ImportError(f"API key {declaration.key} is declared by both {found[declaration.key][0].__name__} "
                              f"and {module.__name__}")
        found[declaration.key] = (module, declaration)
    return dict(sorted(found.items()))


def _handler_modules() -> list[ModuleType]:
    """The package's modules that define API_KEY, imported."""
    modules = []
    for info in pkgutil.iter_modules(__path__):
        if not info.ispkg and _DEFINES_API_KEY.search((Path(__file__).parent / f"{info.name}.py").read_bytes()):
            modules.append(importlib.import_module(f"{__name__}.{info.name}"))
    return modules


_REGISTRY = declare(_handler_modules())
API_MODULES: dict[int, ModuleType] = {key: module for key, (module, _) in _REGISTRY.items()}
API_DECLARATIONS: dict[int, ApiDeclaration] = {key: declaration for key, (_, declaration) in _REGISTRY.items()}


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
