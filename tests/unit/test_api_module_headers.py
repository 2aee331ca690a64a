"""Every API module opens with what it serves, and the registry finds the modules itself (issue 28).

A handler module's docstring starts with `Name (key): what it does.`, has a paragraph starting
`Versions A-B` (`Version A` for one version) that matches MIN_VERSION-MAX_VERSION and names the lower
bounds a module declares on top of them, and a sentence starting `Mirrors ` naming the Kafka code it
follows. The versions are read from the module itself, not from the registry under test.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

import minibroker.apis as apis
from minibroker.apis import API_MODULES
from minibroker.protocol.messages import REQUESTS


def _versions(low: int, high: int) -> str:
    return f"{low}-{high}" if low < high else f"{low}"


SENTENCE = r"(?:[^.]|\.\d)*"  # within one sentence ("4.0" does not end it)


def _paragraphs(doc: str) -> list[str]:
    return [" ".join(part.split()) for part in doc.strip().split("\n\n")]


@pytest.mark.parametrize("key", sorted(API_MODULES))
def test_header_names_api_versions_and_kafka_code(key: int) -> None:
    module = API_MODULES[key]
    doc = module.__doc__ or ""
    name = REQUESTS[key].__name__.removesuffix("Request")
    first_line = doc.strip().split("\n", 1)[0]
    assert re.fullmatch(rf"{name} \({key}\): \S.*\.", first_line), first_line

    low, high = module.MIN_VERSION, module.MAX_VERSION
    lead = f"Versions {low}-{high}" if low < high else f"Version {low}"
    versions = [p for p in _paragraphs(doc) if re.match(r"Versions? \d", p)]
    assert len(versions) == 1, f"{module.__name__}: one paragraph starting 'Versions A-B'"
    assert re.match(rf"{lead}\b(?!-)", versions[0]), f"{module.__name__}: {versions[0][:60]!r} should open {lead!r}"
    declared = vars(module)
    if "ADVERTISED_MIN_VERSION" in declared:
        advertised = _versions(declared["ADVERTISED_MIN_VERSION"], low - 1)
        mention = rf"\bv?{advertised}\b{SENTENCE}advertised|advertised{SENTENCE}\bv?{advertised}\b"
        assert re.search(mention, versions[0]), f"{module.__name__}: v{advertised} advertised"
    if "PRE_KIP896_MIN_VERSION" in declared:
        older = _versions(declared["PRE_KIP896_MIN_VERSION"], low - 1)
        mention = rf"\bv?{older}\b{SENTENCE}before 4\.0"
        assert re.search(mention, versions[0]), f"{module.__name__}: v{older} before 4.0"

    assert re.search(r"(?:^|[.:]\s+)Mirrors [A-Z]\w*", " ".join(doc.split())), f"{module.__name__}: 'Mirrors ...'"


def _defines_api_key(path: Path) -> bool:
    """Whether the module's own top level assigns API_KEY (read from its source, nothing imported)."""
    tree = ast.parse(path.read_text())
    return any(isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "API_KEY" for t in node.targets)
               for node in tree.body)


def test_registry_holds_exactly_the_modules_that_define_api_key() -> None:
    package = Path(apis.__file__).parent
    defining = {info.name for info in pkgutil.iter_modules(apis.__path__)
                if _defines_api_key(package / f"{info.name}.py")}
    assert len(defining) >= 50
    assert {module.__name__.rsplit(".", 1)[1] for module in API_MODULES.values()} == defining
    for key, module in API_MODULES.items():
        assert module.API_KEY == key
    # and nothing else in the package has an API_KEY once imported
    for info in pkgutil.iter_modules(apis.__path__):
        module = importlib.import_module(f"{apis.__name__}.{info.name}")
        assert hasattr(module, "API_KEY") == (info.name in defining), info.name


def test_registry_is_not_a_hand_kept_list() -> None:
    """The package's __init__ names no handler module but ApiVersions, which it hands the advertised ranges."""
    source = ast.parse(Path(apis.__file__).read_text())
    named = {alias.name for node in ast.walk(source) if isinstance(node, ast.ImportFrom) and node.level == 1
             for alias in node.names}
    assert named & {module.__name__.rsplit(".", 1)[1] for module in API_MODULES.values()} <= {"api_versions"}


def _module(name: str, **attributes: object) -> ModuleType:
    module = ModuleType(name)
    vars(module).update(attributes)
    return module


def test_two_modules_with_one_key_fail_loudly() -> None:
    from minibroker.apis import declare

    one = _module("one", API_KEY=7, MIN_VERSION=0, MAX_VERSION=1, handle=lambda request, ctx: None)
    other = _module("other", API_KEY=7, MIN_VERSION=0, MAX_VERSION=2, handle=lambda request, ctx: None)
    with pytest.raises(ImportError, match="one.*other|other.*one"):
        declare([one, other])


def test_declarations_type_the_optional_parts() -> None:
    from minibroker.apis import API_DECLARATIONS

    assert set(API_DECLARATIONS) == set(API_MODULES)
    for key, declaration in API_DECLARATIONS.items():
        module = vars(API_MODULES[key])
        assert (declaration.key, declaration.min_version, declaration.max_version) == (
            key, module["MIN_VERSION"], module["MAX_VERSION"])
        assert declaration.advertised_min_version == module.get("ADVERTISED_MIN_VERSION")
        assert declaration.pre_kip896_min_version == module.get("PRE_KIP896_MIN_VERSION")
        assert declaration.encode_body is module.get("encode_body")
        assert declaration.stored_batch_holders is module.get("stored_batch_holders")
