"""Every pattern builds alike: for Python, the CLI and `langgraph dev`
(tests/test_descriptors.py checks that each is registered once)."""

from __future__ import annotations

import importlib

import pytest

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.testing import ScriptedChatModel
from reasoning_graphs.tools.builtins import calculator


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_server_graphs_bring_no_checkpointer(pattern: str) -> None:
    module = importlib.import_module(f"reasoning_graphs.graphs.{pattern}.graph")
    assert module.graph().checkpointer is None
    assert graph_builder(pattern) is module.build_graph
    assert module.graph().name == pattern


def test_unknown_pattern_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="react"):
        graph_builder("tree_of_thought")


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_checkpoints_are_saved_before_the_next_step_by_default(pattern: str) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    graph = graph_builder(pattern)(
        ScriptedChatModel(script=[]), tools=[calculator()], checkpointer=InMemorySaver()
    )

    # how the default is set is checked once, in test_durability_default.py
    assert "sync" in graph.config["configurable"].values()
