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

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RetryPolicy, Send

from reasoning_graphs._sync import dual_node
from reasoning_graphs.context import AgentContext, Limits
from reasoning_graphs.nodes.act import ACT, make_act, next_calls
from reasoning_graphs.nodes.approve import make_approve
from reasoning_graphs.nodes.finish import make_finish
from reasoning_graphs.nodes.observe import make_observe
from reasoning_graphs.nodes.retry import model_retry_policy
from reasoning_graphs.nodes.setup import AgentSetup
from reasoning_graphs.nodes.think import make_think, wants_tools
from reasoning_graphs.nodes.turn import last_ai_message, steps_used, turn_number
from reasoning_graphs.prompts import REACT_SYSTEM
from reasoning_graphs.state import AgentInput, AgentState
from reasoning_graphs.tools.builtins import default_tools
from reasoning_graphs.tools.policy import Rule
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import ToolSpec


def build_graph(
    model: BaseChatModel | str | None = None,
    tools: Iterable[BaseTool | Callable[..., Any] | ToolSpec] | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    *,
    max_steps: int = 10,
    max_tool_calls_per_turn: int = 8,
    token_budget: int | None = None,
    approve: Sequence[str] = (),
    deny: Sequence[str] = (),
    rules: Sequence[Rule] = (),
    system_prompt: str = REACT_SYSTEM,
    retry: RetryPolicy | None = None,
) -> CompiledStateGraph:
    """Build the ReAct graph.

    Args:
        model: A chat model, a model spec (``"openai:gpt-4o-mini"``, ``"local"``) or
            ``None`` to resolve the default at run time.
        tools: Tools or tool specs; ``None`` for the built-in tools.
        checkpointer: Where runs are saved so they can pause and resume.
        max_steps: Model steps per question before an incomplete answer.
        max_tool_calls_per_turn: Calls one model turn may make; extra calls are refused.
        token_budget: Prompt plus completion tokens per question (``None``: no limit).
        approve: Tools that need approval besides dangerous ones (``["all"]``: every tool).
        deny: Tools that are never run.
        rules: Checks that may block a call before anyone is asked.
        system_prompt: The model's instructions.
        retry: Retry policy for model calls (default: backoff on transient errors).

    Example:
        >>> from reasoning_graphs.testing import ScriptedChatModel, tool_call
        >>> model = ScriptedChatModel(script=[tool_call("calculator", expression="6*7"), "42"])
        >>> graph = build_graph(model)
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    spec_string = model if isinstance(model, str) else None
    setup = AgentSetup(
        registry=ToolRegistry(default_tools() if tools is None else tools),
        limits=Limits(
            model=spec_string,
            max_steps=max_steps,
            max_tool_calls_per_turn=max_tool_calls_per_turn,
            token_budget=token_budget,
            approve=tuple(approve),
            deny=tuple(deny),
        ),
        model=None if spec_string else model,
        rules=tuple(rules),
        system_prompt=system_prompt,
    )

    def after_think(state: AgentState) -> Literal["approve"] | Any:
        return "approve" if wants_tools(last_ai_message(state["messages"])) else END

    def to_act(state: AgentState) -> list[Send] | Literal["observe"]:
        run = setup.for_run()
        turn, step = turn_number(state["messages"]), steps_used(state)
        return next_calls(state, run.registry, turn=turn, step=step) or "observe"

    def after_observe(state: AgentState) -> Literal["think", "finish"]:
        return "finish" if state.get("outcome") else "think"

    builder = StateGraph(AgentState, context_schema=AgentContext, input_schema=AgentInput)
    builder.add_node(
        "think", dual_node("think", make_think(setup)), retry_policy=retry or model_retry_policy()
    )
    builder.add_node("approve", dual_node("approve", make_approve(setup)))
    builder.add_node(ACT, dual_node(ACT, make_act(setup)))
    builder.add_node("observe", dual_node("observe", make_observe(setup)))
    builder.add_node("finish", dual_node("finish", make_finish(setup)))
    builder.add_edge(START, "think")
    builder.add_conditional_edges("think", after_think, ["approve", END])
    builder.add_conditional_edges("approve", to_act, [ACT, "observe"])
    builder.add_conditional_edges(ACT, to_act, [ACT, "observe"])
    builder.add_conditional_edges("observe", after_observe, ["think", "finish"])
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="react")


graph = build_graph()
"""Checkpointer-free graph for ``langgraph dev`` (the server brings its own persistence)."""
