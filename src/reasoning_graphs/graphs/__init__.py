"""The reasoning patterns, by the names users know them.

Each pattern is a package here; its ``pattern.py`` holds its record
(:class:`~reasoning_graphs.patterns.Pattern`), its ``graph.py`` its wiring, its
``build_graph`` and the ``graph`` that ``langgraph.json`` names. Importing this
module reads the records only: no pattern is built or loaded.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reasoning_graphs.patterns import Pattern

if TYPE_CHECKING:  # the command line reads PATTERNS without loading LangGraph
    from langgraph.graph.state import CompiledStateGraph

PACKAGES = (
    "react",
    "react_text",
    "rewoo",
    "plan_execute",
    "plan_react",
    "llm_compiler",
    "reflexion",
    "lats",
    "cot",
    "tot",
)
"""The pattern packages, in the order lists show them: the plainest first."""

PATTERNS: dict[str, Pattern] = {
    name: importlib.import_module(f"{__name__}.{name}.pattern").PATTERN for name in PACKAGES
}
"""Pattern name → its record."""

UNKNOWN_PATTERN = "Unknown pattern {name!r}; available: {available}."

__all__ = ["PATTERNS", "Pattern", "build_graph", "graph_builder", "pattern_named"]


def pattern_named(name: str) -> Pattern:
    """The record of the pattern called ``name``.

    Raises:
        ValueError: No pattern has that name; the message lists those that do.
    """
    pattern = PATTERNS.get(name)
    if pattern is None:
        raise ValueError(UNKNOWN_PATTERN.format(name=name, available=", ".join(PATTERNS)))
    return pattern


def graph_builder(name: str) -> Callable[..., CompiledStateGraph]:
    """The ``build_graph`` of the pattern called ``name``.

    Raises:
        ValueError: No pattern has that name.
    """
    return pattern_named(name).load_builder()


def build_graph(pattern: str, /, *args: Any, **kwargs: Any) -> CompiledStateGraph:
    """Build the graph of the pattern called ``pattern``; the other arguments are that
    pattern's ``build_graph``'s (``model``, ``tools``, ``checkpointer``, its own options).

    Raises:
        ValueError: No pattern has that name, or an option's value is out of its bounds.

    Examples:
        >>> from reasoning_graphs.testing import ScriptedChatModel
        >>> graph = build_graph("cot", model=ScriptedChatModel(script=["6*7 is 42.\\nAnswer: 42"]))
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    return graph_builder(pattern)(*args, **kwargs)
