"""The ReAct loop as a graph: think → approve → act → observe → think, and finish.

ReAct's own graph is this loop; Plan-and-Execute runs it for each plan step and
Reflexion for each trial, as a subgraph (:func:`build_step_graph`), so the
loop, its system prompt and its state are shared rather than copied.
Plan-in-context ReAct is this loop with its plan added (:class:`LoopParts`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RetryPolicy, Send
from typing_extensions import Unpack

from reasoning_graphs.checkpointers import CheckpointerSpec
from reasoning_graphs.context import ReactLoopContext
from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.guards.stop import model_node, model_step
from reasoning_graphs.nodes.model.setup import AgentOptions, AgentSetup, agent_setup
from reasoning_graphs.nodes.steps.act import ACT
from reasoning_graphs.nodes.steps.answer_turn import wants_tools
from reasoning_graphs.nodes.steps.finish import after_outcome
from reasoning_graphs.nodes.steps.model_turn import around_turn
from reasoning_graphs.nodes.steps.prompts import REACT_SYSTEM
from reasoning_graphs.nodes.steps.think import make_think
from reasoning_graphs.nodes.steps.verify import verified
from reasoning_graphs.nodes.wiring.tool_loop import (
    Detour,
    add_tool_loop,
    agent_graph_builder,
    compile_agent,
    to_settle,
)
from reasoning_graphs.question import answered_ids, last_ai_message
from reasoning_graphs.state import AgentState, AgentUpdate, StepInput, StepState
from reasoning_graphs.stores import StoreSpec
from reasoning_graphs.tools.spec import ToolSpec

StepBody = Callable[[AgentState], Body[AgentUpdate]]
ModelStep = Callable[[AgentState], Body[Mapping[str, Any]]]


@dataclass(frozen=True)
class LoopParts:
    """What a pattern built on the loop adds to it (Plan-in-context ReAct: its plan).

    Attributes:
        name: The graph's name.
        context_schema: Its run options.
        make_think: Builds the ``think`` node from the setup.
        steps: Model steps of the pattern's own, by name, each built from the setup;
            each hands on to ``think``.
        opening: The step run before the first ``think``, when there is one.
        detour: The step a round hands to instead of ``think`` when the round asks for it.
    """

    name: str = "react"
    context_schema: type[ReactLoopContext] = ReactLoopContext
    make_think: Callable[[AgentSetup], StepBody] = make_think
    steps: Mapping[str, Callable[[AgentSetup], ModelStep]] = field(default_factory=dict)
    opening: str | None = None
    detour: Detour | None = None


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
    return react_loop(
        model, tools, None, StepInput, retry, options, report=False, state_schema=StepState
    )


def react_loop(
    model: BaseChatModel | str | None,
    tools: Iterable[BaseTool | Callable[..., Any] | ToolSpec] | None,
    checkpointer: CheckpointerSpec | None,
    input_schema: type,
    retry: RetryPolicy | None,
    options: AgentOptions,
    *,
    report: bool = True,
    parts: LoopParts = LoopParts(),
    store: StoreSpec | None = None,
    state_schema: type = AgentState,
) -> CompiledStateGraph:
    """The ReAct loop compiled with ``input_schema`` as its input; ``report``: the step
    that ends a question writes its grounding report (a step's subgraph leaves that, and
    its tracing labels, to its pattern, and reflection too: Plan-and-Execute and Reflexion
    look back their own way); ``parts``: what a pattern adds to the loop; ``store``: memory
    across threads; ``state_schema``: its state (a step's graph keeps the question's
    earlier work too)."""
    options.setdefault("system_prompt", REACT_SYSTEM)
    setup = agent_setup(model, tools, retry, **options)

    def after_think(
        state: AgentState,
    ) -> list[Send] | Literal["approve", "finish", "think", "__end__"]:
        outcome = state.get("outcome")
        if outcome and after_outcome(outcome) == "finish":
            return "finish"  # the budget was spent before thinking
        if wants_tools(last_ai_message(state["messages"])):
            if answered_in_turn(state):  # a response format's own call, answered in the turn
                return "__end__" if outcome else "think"
            return to_settle(state, setup)
        return "__end__"

    think = around_turn(setup, parts.make_think(setup))
    builder = agent_graph_builder(
        state_schema,
        setup=setup,
        input_schema=input_schema,
        context_schema=parts.context_schema,
    )
    step = model_step(verified(setup, think) if report else think)
    # "think" back to itself (a response format's call told its error) is not drawn: the
    # pinned drawings predate it
    builder.add_routed_node("think", step, after_think, ("approve", ACT, "finish", END))
    for name, make_step in parts.steps.items():
        builder.add_node(name, model_node(name, make_step(setup)))
        builder.add_edge(name, "think")
    builder.add_edge(START, parts.opening or "think")
    add_tool_loop(builder, setup, detour=parts.detour, report=report, reflect=report)
    return compile_agent(
        builder,
        checkpointer,
        parts.name,
        setup=setup,
        subgraph=not report,
        store=store,
    )


def answered_in_turn(state: AgentState) -> bool:
    """Whether the latest reply's calls, broken ones included, were all answered in the turn
    that made them (a response format's own call is): none is left to settle."""
    reply = last_ai_message(state["messages"])
    calls = [*reply.tool_calls, *reply.invalid_tool_calls]
    answered = answered_ids(state["messages"])
    return bool(calls) and all(call.get("id") in answered for call in calls)
