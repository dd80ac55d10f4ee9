"""What the library knows of a reasoning pattern, in one record per pattern.

Each pattern's package holds its record in ``pattern.py``; the command line,
the bench and the tests read the records (:data:`reasoning_graphs.graphs.PATTERNS`)
instead of keeping lists of their own, so a new pattern is a new package and
nothing else forgets it. A record names code as ``"module:attribute"`` and
imports it only when asked: reading the records loads no LangGraph, which the
command line relies on to answer ``--help`` at once.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from reasoning_graphs.context import AgentContext

NO_ATTRIBUTE = "module {module!r} has no attribute {name!r}"


@dataclass(frozen=True)
class Pattern:
    """One reasoning pattern, as the code that is not the pattern's own needs it.

    Attributes:
        name: The name users know it by (``--pattern``, ``langgraph.json``).
        summary: One line on what it does, for ``reasoning-graphs patterns``.
        builder: Its ``build_graph``, as ``"module:function"``.
        context: Its run options' class (Studio's fields), as ``"module:Class"``.
        oracle: The bench oracle's protocol for it, as ``"module:function"``.
        answer_nodes: The top-level nodes whose model text may be the answer as it is
            written; the command line shows their tokens as the answer streams.
        uses_tools: Whether it calls tools; suites that need tools skip it otherwise.
    """

    name: str
    summary: str
    builder: str
    context: str
    oracle: str
    answer_nodes: frozenset[str] = frozenset()
    uses_tools: bool = True

    def load_builder(self) -> Callable[..., CompiledStateGraph]:
        """The pattern's ``build_graph`` (this imports the pattern and LangGraph)."""
        builder: Callable[..., CompiledStateGraph] = load(self.builder)
        return builder

    def load_context(self) -> type[AgentContext]:
        """The class of the pattern's run options."""
        context: type[AgentContext] = load(self.context)
        return context

    def load_oracle(self) -> Callable[..., Any]:
        """The oracle's protocol: the reply to one call of the pattern on a task."""
        protocol: Callable[..., Any] = load(self.oracle)
        return protocol


def load(reference: str) -> Any:
    """The attribute a ``"module:attribute"`` reference names, importing its module."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def lazy_attributes(module: str, references: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) that imports each of ``references`` on first use,
    so that importing the module stays light."""

    def __getattr__(name: str) -> Any:
        if name not in references:
            raise AttributeError(NO_ATTRIBUTE.format(module=module, name=name))
        return load(references[name])

    return __getattr__
