"""ReAct with native tool calling: think → approve → act → observe → think.

The model thinks and proposes tool calls; ``approve`` settles each call
(policy, repetition, a person's decision) before anything runs; ``act`` runs
the cleared calls — concurrently when all are read-only, else one per step in
the model's order; ``observe`` checks the budgets. A turn ends on an answer,
or in ``finish`` with an honest, incomplete answer when a budget is spent or
the model goes in circles. (Yao et al., 2023, "ReAct: Synergizing Reasoning
and Acting in Language Models".)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RetryPolicy
from typing_extensions import Unpack

from reasoning_graphs.effects import dual_node
from reasoning_graphs.graphs._tool_loop import add_tool_loop, agent_graph_builder, compile_agent
from reasoning_graphs.nodes.retry import model_retry_policy
from reasoning_graphs.nodes.setup import AgentOptions, agent_setup
from reasoning_graphs.nodes.think import make_think, wants_tools
from reasoning_graphs.nodes.turn import last_ai_message
from reasoning_graphs.prompts import REACT_SYSTEM
from reasoning_graphs.state import AgentInput, AgentState, StepInput
from reasoning_graphs.tools.spec import ToolSpec


def build_graph(
    model: BaseChatModel | str | None = None,
    tools: Iterable[BaseTool | Callable[..., Any] | ToolSpec] | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
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
        retry: Retry policy for model calls (default: backoff on transient errors).
        **options: Budgets, approval lists, block rules and the system prompt
            (see :class:`~reasoning_graphs.nodes.setup.AgentOptions`).

    Example:
        >>> from reasoning_graphs.testing import ScriptedChatModel, tool_call
        >>> model = ScriptedChatModel(script=[tool_call("calculator", expression="6*7"), "42"])
        >>> graph = build_graph(model)
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    return _react(model, tools, checkpointer, AgentInput, retry, options)


def build_step_graph(
    model: BaseChatModel | str | None = None,
    tools: Iterable[BaseTool | Callable[..., Any] | ToolSpec] | None = None,
    *,
    retry: RetryPolicy | None = None,
    **options: Unpack[AgentOptions],
) -> CompiledStateGraph:
    """The ReAct graph as a pattern runs it for one plan step or trial, as a subgraph.

    Its input also takes the question's rejections and the model calls spent so
    far (:class:`~reasoning_graphs.state.StepInput`), so decisions stick and
    budgets cover the whole question. It has no checkpointer: it uses its parent's.
    """
    return _react(model, tools, None, StepInput, retry, options)


def _react(
    model: BaseChatModel | str | None,
    tools: Iterable[BaseTool | Callable[..., Any] | ToolSpec] | None,
    checkpointer: BaseCheckpointSaver | None,
    input_schema: type,
    retry: RetryPolicy | None,
    options: AgentOptions,
) -> CompiledStateGraph:
    options.setdefault("system_prompt", REACT_SYSTEM)
    setup = agent_setup(model, tools, **options)

    def after_think(state: AgentState) -> Literal["approve", "finish"] | Any:
        outcome = state.get("outcome")
        if outcome and outcome["status"] == "incomplete":
            return "finish"  # the budget was spent before thinking
        return "approve" if wants_tools(last_ai_message(state["messages"])) else END

    builder = agent_graph_builder(input_schema=input_schema)
    builder.add_node(
        "think", dual_node("think", make_think(setup)), retry_policy=retry or model_retry_policy()
    )
    builder.add_edge(START, "think")
    builder.add_conditional_edges("think", after_think, ["approve", "finish", END])
    add_tool_loop(builder, setup)
    return compile_agent(builder, checkpointer, "react")


graph = build_graph()
"""Checkpointer-free graph for ``langgraph dev`` (the server brings its own persistence)."""
