"""Plan-in-context ReAct: plan → think → approve → act → observe → think, with replan.

``plan`` writes a short numbered plan in one typed call. Then one ReAct loop —
the shared one, with its approvals, budgets, loop guards and grounding — runs
with the plan in its system prompt, each item marked when done. The model marks
items through the ``update_plan`` tool, which the loop runs like any read-only
tool; when an observation contradicts the plan it asks, through the same tool,
for a rewrite, and ``replan`` writes the new plan into the same thread before
the next ``think``. Rewrites are bounded by ``max_replans``; past it the loop
goes on with the plan it has and is told so. (Yao et al., 2023, "ReAct"; the
plan kept in context as in Wang et al., 2023, "Plan-and-Solve Prompting".)
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.context import StepFormat
from reasoning_graphs.graphs.plan_react.board import plan_board
from reasoning_graphs.graphs.plan_react.context import PlanReactContext
from reasoning_graphs.graphs.plan_react.plan import make_plan, make_replan
from reasoning_graphs.graphs.plan_react.think import may_replan, plan_think
from reasoning_graphs.graphs.plan_react.update_tool import UPDATE_PLAN_SPEC
from reasoning_graphs.nodes.steps.step_rules import StepRule
from reasoning_graphs.nodes.steps.typed_think import StepFormatting
from reasoning_graphs.nodes.wiring.pattern_builder import SharedArgs, pattern_builder, served
from reasoning_graphs.nodes.wiring.react_loop import LoopParts, react_loop
from reasoning_graphs.nodes.wiring.tool_loop import Detour
from reasoning_graphs.state import AgentInput, AgentState
from reasoning_graphs.tools.builtins import default_tools


@pattern_builder(model_turns=True, context=PlanReactContext)
def build_graph(
    shared: SharedArgs,
    *,
    max_replans: int,
    max_plan_items: int = 6,
    step_format: StepFormat = "free",
    step_rules: Sequence[StepRule] = (),
) -> CompiledStateGraph:
    """Build the Plan-in-context ReAct graph.

    The model must support tool calling; the plan is a typed reply when it supports
    ``with_structured_output``, else numbered lines. The ``update_plan`` tool is added
    to the tools. ``max_model_calls`` and ``token_budget`` cover the plan, its
    rewrites and the loop.

    Args:
        max_plan_items: Items a plan may hold; extra items are dropped.
        step_format: ``"free"`` (native tool calls) or ``"structured"`` (typed steps, as in
            the ``react`` pattern); a run may choose.
        step_rules: What an unsure typed step leads to (see
            :mod:`~reasoning_graphs.nodes.steps.step_rules`).

    Examples:
        >>> from reasoning_graphs.graphs.plan_react.plan import PlanItems
        >>> from reasoning_graphs.testing import ScriptedChatModel, tool_call
        >>> model = ScriptedChatModel(script=[
        ...     PlanItems(items=["Compute 6*7 with the calculator."]),
        ...     tool_call("calculator", expression="6*7"), "42",
        ... ])
        >>> graph = build_graph(model)
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """

    def replan_wanted(state: AgentState) -> bool:
        return may_replan(plan_board(state["messages"]), max_replans)

    tools = [*(default_tools() if shared.tools is None else shared.tools), UPDATE_PLAN_SPEC]
    parts = LoopParts(
        name="plan_react",
        context_schema=PlanReactContext,
        make_think=plan_think(max_replans, StepFormatting(step_format, tuple(step_rules))),
        steps={
            "plan": lambda setup: make_plan(setup, max_items=max_plan_items),
            "replan": lambda setup: make_replan(setup, max_items=max_plan_items),
        },
        opening="plan",
        detour=Detour("replan", replan_wanted),
    )
    return react_loop(
        shared.model,
        tools,
        shared.checkpointer,
        AgentInput,
        shared.retry,
        shared.options,
        parts=parts,
        store=shared.store,
    )


graph = served(build_graph)
