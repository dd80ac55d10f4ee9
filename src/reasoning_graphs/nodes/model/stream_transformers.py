"""The stream transformers a pattern's graph carries, in the order ``create_agent`` gives them.

LangGraph's v3 streaming (``graph.stream_events(..., version="v3")``) passes every event
through transformer factories the compiled graph holds, each called with a scope (a
subgraph's run gets fresh ones of its own). A middleware may need to see or change what
the stream shows, not only what the state holds: ``PIIMiddleware(apply_to_output=True)``
redacts streamed deltas before any consumer reads them, and a middleware that calls a
model internally hides that call from ``run.messages``. It says so in
``AgentMiddleware.transformers``; the caller may add more with the build option
``transformers``. Registered as ``create_agent`` registers them, a middleware behaves
the same in our patterns as in LangChain's agent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langgraph.prebuilt import ToolCallTransformer

from reasoning_graphs.private_names import SubagentTransformer

TransformerFactory = Callable[[tuple[str, ...]], Any]
"""Makes a stream transformer for one scope (a ``StreamTransformer`` class is one)."""


def _builtins() -> tuple[TransformerFactory, ...]:
    """What every agent streams beside LangGraph's own projections: ``run.tool_calls``, and
    ``run.subagents`` where the installed LangChain has it (a private module of theirs, so
    an older or newer release may lack it)."""
    if SubagentTransformer is None:
        return (ToolCallTransformer,)
    return (ToolCallTransformer, SubagentTransformer)


def graph_transformers(
    middleware: Iterable[Any], given: Sequence[TransformerFactory] | None = ()
) -> tuple[TransformerFactory, ...]:
    """The factories a graph registers: the built-in ones, each middleware's (first
    middleware first), then ``given``, each once.

    A factory listed twice (two middleware sharing one, or the caller repeating a
    built-in) would filter or project every event twice; repeats are dropped by
    identity, since a factory need not be hashable.
    """
    declared = [factory for m in middleware for factory in getattr(m, "transformers", ())]
    seen: set[int] = set()
    kept: list[TransformerFactory] = []
    for factory in (*_builtins(), *declared, *(given or ())):
        if id(factory) not in seen:
            seen.add(id(factory))
            kept.append(factory)
    return tuple(kept)
