"""The layers hold: shared steps never import a pattern, and no pattern imports another.

Data flows one way — a pattern's graph wires nodes, nodes call models and tools —
so a pattern can be read, changed or removed on its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import reasoning_graphs
from reasoning_graphs.graphs import PATTERNS

PACKAGE = Path(reasoning_graphs.__file__).parent
PATTERN_PACKAGES = {f"reasoning_graphs.graphs.{name}" for name in PATTERNS}


def imported_modules(path: Path) -> set[str]:
    """Every module a source file imports, by its full name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def pattern_of(module: str) -> str | None:
    return next((p for p in PATTERN_PACKAGES if module == p or module.startswith(f"{p}.")), None)


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_a_pattern_imports_no_other_pattern(pattern: str) -> None:
    own = f"reasoning_graphs.graphs.{pattern}"
    for path in (PACKAGE / "graphs" / pattern).glob("*.py"):
        others = {p for m in imported_modules(path) if (p := pattern_of(m)) and p != own}
        assert not others, f"{path.name} of {pattern} imports {sorted(others)}"


def test_shared_code_imports_no_graph() -> None:
    for folder in ("nodes", "tools", "models", "text_format"):
        for path in (PACKAGE / folder).rglob("*.py"):
            graphs = {m for m in imported_modules(path) if m.startswith("reasoning_graphs.graphs")}
            assert not graphs, f"{folder}/{path.name} imports {sorted(graphs)}"


def test_every_pattern_package_has_its_wiring() -> None:
    for pattern in PATTERNS:
        assert (PACKAGE / "graphs" / pattern / "graph.py").is_file(), pattern


def test_graphs_holds_only_the_pattern_packages() -> None:
    """Shared wiring lives in nodes/, so a pattern's imports name nothing but shared code."""
    modules = {path.stem for path in (PACKAGE / "graphs").glob("*.py")}
    packages = {
        path.name for path in (PACKAGE / "graphs").iterdir() if (path / "__init__.py").exists()
    }
    assert modules == {"__init__"}
    assert packages == set(PATTERNS)


ROOMS = ("grounding", "guards", "model", "steps", "wiring")
"""The rooms of ``nodes/``, from the bottom up: each imports only itself and the rooms below."""


def room_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] == ["reasoning_graphs", "nodes"] and len(parts) > 2:
        return parts[2]
    return None


def test_nodes_holds_only_its_rooms() -> None:
    modules = {path.stem for path in (PACKAGE / "nodes").glob("*.py")}
    rooms = {path.name for path in (PACKAGE / "nodes").iterdir() if (path / "__init__.py").exists()}
    assert modules == {"__init__"}
    assert rooms == set(ROOMS)


@pytest.mark.parametrize("room", ROOMS)
def test_a_room_imports_no_room_above_it(room: str) -> None:
    above = set(ROOMS[ROOMS.index(room) + 1 :])
    for path in (PACKAGE / "nodes" / room).glob("*.py"):
        upward = {m for m in imported_modules(path) if room_of(m) in above}
        assert not upward, f"nodes/{room}/{path.name} imports {sorted(upward)}"


def test_code_below_the_nodes_imports_none_of_them() -> None:
    """The state, history and tool modules are what nodes read; they never read a node."""
    below = [*(PACKAGE / "tools").rglob("*.py"), *(PACKAGE / "models").rglob("*.py")]
    below += [PACKAGE / f"{name}.py" for name in ("state", "history", "metadata", "question")]
    for path in below:
        nodes = {m for m in imported_modules(path) if room_of(m)}
        assert not nodes, f"{path.relative_to(PACKAGE)} imports {sorted(nodes)}"
