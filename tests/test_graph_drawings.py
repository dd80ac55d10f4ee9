"""Every pattern's wiring is pinned: its drawing must match the committed one.

A changed node or edge then shows in review as a changed ``tests/drawings/<pattern>.mmd``.
After an intended change, write the new drawings with
``UPDATE_DRAWINGS=1 python -m pytest tests/test_graph_drawings.py`` and commit them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.testing import ScriptedChatModel

DRAWINGS = Path(__file__).parent / "drawings"


def drawing(pattern: str) -> str:
    graph = graph_builder(pattern)(ScriptedChatModel(script=[]))
    return graph.get_graph(xray=True).draw_mermaid()


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_wiring_matches_the_committed_drawing(pattern: str) -> None:
    committed = DRAWINGS / f"{pattern}.mmd"
    drawn = drawing(pattern)
    if os.environ.get("UPDATE_DRAWINGS"):
        committed.write_text(drawn, encoding="utf-8")
    assert committed.exists(), f"no committed drawing for {pattern}; see this module's docstring"
    assert drawn == committed.read_text(encoding="utf-8"), (
        f"{pattern}'s wiring changed; if intended, update tests/drawings (see the docstring)"
    )


def test_every_drawing_belongs_to_a_pattern() -> None:
    assert {path.stem for path in DRAWINGS.glob("*.mmd")} == set(PATTERNS)
