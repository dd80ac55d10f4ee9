"""ReAct with native tool calling: think → approve → act → observe → think.

The model thinks and proposes tool calls; ``approve`` settles each call
(policy, repetition, a person's decision) before anything runs; ``act`` runs
the cleared calls — concurrently when all are read-only, else one per step in
the model's order; ``observe`` records what a round ends in (a spent budget,
rounds gone stale, a hint). A turn whose calls need nothing settled goes
straight from ``think`` to ``act``, and a round with nothing to record straight
back to ``think``, so a plain round costs two steps. A turn ends on an answer,
or in ``finish`` with an honest, incomplete answer when a budget is spent or
the model goes in circles. (Yao et al., 2023, "ReAct: Synergizing Reasoning
and Acting in Language Models".)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RetryPolicy
from typing_extensions import Unpack

from reasoning_graphs.checkpointers import CheckpointerSpec
from reasoning_graphs.nodes.model.setup import AgentOptions
from reasoning_graphs.nodes.wiring.react_loop import react_loop
from reasoning_graphs.state import AgentInput
from reasoning_graphs.tools.builtins import server_tools
from reasoning_graphs.tools.spec import ToolSpec


def build_graph(
    model: BaseChatModel | str | None = None,
    tools: Iterable[BaseTool | Callable[..., Any] | ToolSpec] | None = None,
    checkpointer: CheckpointerSpec | None = None,
    *,
    retry: RetryPolicy | None = None,
    **options: Unpack[AgentOptions],
) -> CompiledStateGraph:
    """Build the ReAct graph.

    Args:
        model: A chat model, a model spec (``"openai:gpt-4o-mini"``, ``"local"``) or
            ``None`` to resolve the default at run time.
        tools: Tools or tool specs; ``None`` for the built-in tools.
        checkpointer: Where runs are saved so they can pause and resume.
            A saver, or a string naming one (see :mod:`reasoning_graphs.checkpointers`).
        retry: Retry policy for model calls (default: backoff on transient errors).
        **options: Budgets, approval lists, block rules and the system prompt
            (see :class:`~reasoning_graphs.nodes.model.setup.AgentOptions`).

    Example:
        >>> from reasoning_graphs.testing import ScriptedChatModel, tool_call
        >>> model = ScriptedChatModel(script=[tool_call("calculator", expression="6*7"), "42"])
        >>> graph = build_graph(model)
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    return react_loop(model, tools, checkpointer, AgentInput, retry, options)


graph = build_graph(tools=server_tools())
"""Checkpointer-free graph for ``langgraph dev`` (the server brings its own persistence);
its tools work in a folder per thread (:func:`~reasoning_graphs.tools.builtins.server_tools`)."""
