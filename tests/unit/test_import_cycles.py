"""No import cycles in minibroker/ (DESIGN.md): every import of every module, wherever it is written.

Imports under `if TYPE_CHECKING:` never run, but a cycle through them still ties two rooms
together, so they count too; the rooms' rules (DESIGN.md) are checked on the same graph.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "minibroker"


def module_files() -> dict[str, Path]:
    files = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def imports_of(name: str, path: Path, known: dict[str, Path], type_checking: bool = True) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    class Imports(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if type_checking or "TYPE_CHECKING" not in ast.unparse(node.test):
                self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(alias.name for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            target = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
            for alias in node.names:  # `from . import produce` imports the module minibroker.apis.produce
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target)

    Imports().visit(ast.parse(path.read_text()))
    return {other for other in found if other in known and other != name}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as a path (its first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for other in sorted(graph[node]):
            if state.get(other) == 1:
                return path[path.index(other):] + [other]
            if other not in state and (cycle := visit(other)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def import_graph(type_checking: bool = True) -> dict[str, set[str]]:
    known = module_files()
    return {name: imports_of(name, path, known, type_checking) for name, path in known.items()}


def test_minibroker_has_no_import_cycles() -> None:
    for graph in (import_graph(type_checking=False), import_graph()):
        assert len(graph) > 90 and graph["minibroker.apis"]  # the walk sees the package
        assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_server_and_the_core_never_import_test_control() -> None:
    """testing/ registers on the server's request hook; nothing below it knows testing/ exists."""
    graph = import_graph()
    below = [name for name in graph if name.startswith(("minibroker.server", "minibroker.core", "minibroker.apis",
                                                         "minibroker.protocol"))]
    assert len(below) > 40
    offenders = {name: sorted(other for other in graph[name] if other.startswith("minibroker.testing"))
                 for name in below}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_transaction_coordinator_does_not_know_the_cluster() -> None:
    """It reaches partitions and groups through a narrow interface, so core/cluster.py is its only user."""
    assert "minibroker.core.cluster" not in import_graph()["minibroker.core.transaction_coordinator"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
