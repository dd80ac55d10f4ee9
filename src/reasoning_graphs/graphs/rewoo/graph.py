"""ReWOO: plan every tool call first, run them, then answer — two model calls in all.

``plan`` asks the model once for the whole plan, with evidence variables
that wire steps together (``#E2 = lookup[#E1]``), and checks it; an invalid
plan is re-made once with the problem named, and if it is still invalid
``solve`` explains instead of crashing. ``work`` (no model call) hands each
wave of ready steps to the shared loop, ``approve`` → ``act`` → ``observe``,
with their references replaced by results — so approvals, concurrent
read-only calls, ordered stateful calls and crash-safe per-call writes are
those of every other pattern. When no step is left, ``solve`` answers from
the plan and its evidence. (Xu et al., 2023, "ReWOO: Decoupling Reasoning
from Observations for Efficient Augmented Language Models".)

The edges, node by node::

    START    → plan
    plan     → work      the plan is valid
             → plan      it is not: plan again, once
             → solve     it is still not: the solver explains
             → finish    the budget is spent
    work     → act       steps are ready, their references filled in, and
                         they run as written, all at once (one call, or
                         read-only calls together)
             → approve   steps are ready and need settling first
             → solve     no step is left to run
    approve  → act       calls are cleared to run
             → observe   nothing is left to run (rejected, blocked, answered)
             → work      the same, and there is nothing to record
    act      → act       the next stateful call, in plan order
             → observe   the wave is done
             → work      the wave is done and left nothing to record
    observe  → work      within budget
             → finish    a budget is spent
             → END       a tool's result is the answer
    solve    → END       answered
             → finish    the solver's call was stopped (a timeout, or a budget
                         ran out while it streamed)
    finish   → END

The step that ends the question (``solve``, ``finish``, or ``observe`` with a
tool's direct answer) also stores the answer's grounding report.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from langchain_core.messages import AIMessage
from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from reasoning_graphs.graphs.rewoo.plan import MAX_REPLANS, make_plan
from reasoning_graphs.graphs.rewoo.prompts import REWOO_SYSTEM
from reasoning_graphs.graphs.rewoo.solve import ask_solver, make_solve
from reasoning_graphs.graphs.rewoo.state import RewooState
from reasoning_graphs.graphs.rewoo.work import make_work
from reasoning_graphs.nodes.guards.stop import call_stopped, model_node, not_stopped
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.steps.act import ACT
from reasoning_graphs.nodes.steps.verify import verified
from reasoning_graphs.nodes.wiring.pattern_builder import SharedArgs, pattern_builder, served
from reasoning_graphs.nodes.wiring.tool_loop import (
    add_tool_loop,
    agent_graph_builder,
    to_settle,
)

REWOO_MAX_MODEL_CALLS = 12
"""Default model calls per question. ReWOO makes two (plan and answer),
three with a re-plan, and waves of tool calls cost none, so the default never cuts a plan
short; a run that lowers ``max_model_calls`` to what the plan spent stops after the first wave."""


def after_plan(state: RewooState) -> Literal["work", "plan", "solve", "finish"]:
    """Run a valid plan; re-plan an invalid one once; then let the solver explain.
    A spent budget (no plan was asked for) goes to ``finish``."""
    if state.get("outcome"):
        return "finish"
    if not state.get("plan_problem"):
        return "work"
    return "plan" if state.get("replans", 0) < MAX_REPLANS else "solve"


def after_solve(state: RewooState) -> Literal["__end__", "finish"]:
    """The solver answered; a stopped solver call ends in ``finish``'s honest stop."""
    return "finish" if call_stopped(state) else "__end__"


def make_after_work(
    setup: AgentSetup,
) -> Callable[[RewooState], list[Send] | Literal["approve", "solve"]]:
    """``work`` wrote a wave of calls — run at once when none needs settling, else
    settled first — or found nothing left to run."""

    def after_work(state: RewooState) -> list[Send] | Literal["approve", "solve"]:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            return to_settle(state, setup)
        return "solve"

    return after_work


@pattern_builder
def build_graph(shared: SharedArgs) -> CompiledStateGraph:
    """Build the ReWOO graph.

    ``max_model_calls`` defaults to :data:`REWOO_MAX_MODEL_CALLS`.

    Examples:
        >>> from reasoning_graphs.testing import ScriptedChatModel
        >>> from reasoning_graphs.tools.builtins import calculator
        >>> plan = {"steps": [{"var": "E1", "tool": "calculator", "reason": "multiply",
        ...                    "args": {"expression": "6*7"}}]}
        >>> graph = build_graph(ScriptedChatModel(script=[plan, "42"]), tools=[calculator()])
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    shared.options.setdefault("system_prompt", REWOO_SYSTEM)
    shared.options.setdefault(
        "max_model_calls", shared.options.get("max_steps", REWOO_MAX_MODEL_CALLS)
    )
    setup = shared.setup()

    builder = agent_graph_builder(RewooState, setup=setup)
    builder.add_node("plan", model_node("plan", make_plan(setup)))
    builder.add_node("work", make_work(setup))
    builder.add_node("solve", model_node("solve", verified(setup, make_solve(setup), not_stopped)))
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", after_plan, ["work", "plan", "solve", "finish"])
    builder.add_conditional_edges("work", make_after_work(setup), ["approve", ACT, "solve"])
    builder.add_conditional_edges("solve", after_solve, ["finish", END])
    add_tool_loop(builder, setup, ask_final=ask_solver, back_to="work", report=True)
    return shared.compile(builder, "rewoo", setup)


graph = served(build_graph)
