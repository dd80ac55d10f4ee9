"""The reasoning patterns, by the names users know them."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the command line reads PATTERNS without loading LangGraph
    from langgraph.graph.state import CompiledStateGraph

PATTERNS: dict[str, str] = {
    "react": "reasoning_graphs.graphs.react",
    "react_text": "reasoning_graphs.graphs.react_text",
    "rewoo": "reasoning_graphs.graphs.rewoo",
    "plan_execute": "reasoning_graphs.graphs.plan_execute",
    "llm_compiler": "reasoning_graphs.graphs.llm_compiler",
    "reflexion": "reasoning_graphs.graphs.reflexion",
    "lats": "reasoning_graphs.graphs.lats",
    "cot": "reasoning_graphs.graphs.cot",
}
"""Pattern name → its package; the package exports ``build_graph`` and its ``graph``
module holds the checkpointer-free ``graph`` that ``langgraph.json`` names."""

UNKNOWN_PATTERN = "Unknown pattern {name!r}; available: {available}."


def graph_builder(pattern: str) -> Callable[..., CompiledStateGraph]:
    """The ``build_graph`` factory of a pattern.

    Raises:
        ValueError: The pattern is not one of :data:`PATTERNS`.
    """
    module = PATTERNS.get(pattern)
    if module is None:
        raise ValueError(UNKNOWN_PATTERN.format(name=pattern, available=", ".join(PATTERNS)))
    builder: Callable[..., Any] = importlib.import_module(module).build_graph
    return builder
