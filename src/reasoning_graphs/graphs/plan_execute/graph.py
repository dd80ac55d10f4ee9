"""Plan-and-Execute: plan → execute each step (a ReAct run) → replan → done, execute, or finish.

``plan`` writes an ordered list of steps in one structured call. ``execute``
carries out the current step with the ReAct graph as a subgraph — its own
think/approve/act/observe loop, budgets and approvals — and records the
step's result. Steps run one after another without a model call in between;
when the plan is used up, or a step ends incomplete, ``replan`` either
answers or writes the remaining steps. Revisions are bounded: past
``max_replans`` the run ends in ``finish`` with an honest answer marked
incomplete. (Wang et al., 2023, "Plan-and-Solve Prompting"; the LangChain
plan-and-execute agent.)
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.effects import effect_node
from reasoning_graphs.graphs.plan_execute.context import PlanExecuteContext
from reasoning_graphs.graphs.plan_execute.execute import make_execute
from reasoning_graphs.graphs.plan_execute.finish import make_plan_finish
from reasoning_graphs.graphs.plan_execute.plan import make_plan, make_replan
from reasoning_graphs.graphs.plan_execute.state import PlanExecuteState
from reasoning_graphs.nodes.guards.stop import call_stopped, model_node
from reasoning_graphs.nodes.steps.finish import after_outcome
from reasoning_graphs.nodes.wiring.pattern_builder import SharedArgs, pattern_builder, served
from reasoning_graphs.nodes.wiring.react_loop import build_step_graph
from reasoning_graphs.nodes.wiring.tool_loop import add_report, agent_graph_builder


def after_plan(state: PlanExecuteState) -> Literal["execute", "finish"]:
    """A plan always has a first step; a stopped planning call ends in ``finish``."""
    return "finish" if call_stopped(state) else "execute"


def after_execute(state: PlanExecuteState) -> Literal["execute", "replan"]:
    """Go on with the plan while steps succeed; otherwise reconsider it."""
    succeeded = state["past_steps"][-1]["outcome"]["status"] == "answered"
    return "execute" if state["plan"] and succeeded else "replan"


def after_replan(state: PlanExecuteState) -> Literal["execute", "finish", "__end__"]:
    """Answered: done. Stopped (bound reached, nothing left to try): finish. Else: go on."""
    outcome = state.get("outcome")
    return "execute" if outcome is None else after_outcome(outcome)


@pattern_builder(model_turns=True, context=PlanExecuteContext)
def build_graph(
    shared: SharedArgs,
    *,
    max_replans: int,
    max_plan_steps: int = 6,
) -> CompiledStateGraph:
    """Build the Plan-and-Execute graph.

    The model must support ``with_structured_output`` for planning and tool calling
    for the steps; the system prompt is the executor's. The step subgraphs save into the
    checkpointer too, and ``max_model_calls`` and ``token_budget`` cover the whole question —
    planning, every step's calls, revisions and the closing answer.

    Args:
        max_plan_steps: Steps a plan or revision may hold; extra steps are dropped.

    Examples:
        >>> from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
        >>> from reasoning_graphs.testing import ScriptedChatModel, tool_call
        >>> model = ScriptedChatModel(script=[
        ...     Plan(steps=["Compute 6*7 with the calculator."]),
        ...     tool_call("calculator", expression="6*7"), "6*7 = 42",
        ...     Replan(response="42"),
        ... ])
        >>> graph = build_graph(model)
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    step_graph = build_step_graph(shared.model, shared.tools, retry=shared.retry, **shared.options)
    setup = shared.setup()
    plan = make_plan(setup, max_plan_steps=max_plan_steps)
    replan = make_replan(setup, max_replans=max_replans, max_plan_steps=max_plan_steps)

    builder = agent_graph_builder(PlanExecuteState, setup=setup, context_schema=PlanExecuteContext)
    builder.add_node("plan", model_node("plan", plan))
    builder.add_node("execute", make_execute(step_graph))
    builder.add_node("replan", model_node("replan", replan))
    builder.add_node("finish", effect_node("finish", make_plan_finish(setup)))
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", after_plan, ["execute", "finish"])
    builder.add_conditional_edges("execute", after_execute, ["execute", "replan"])
    end = add_report(builder, setup)
    builder.add_conditional_edges(
        "replan", after_replan, {"execute": "execute", "finish": "finish", END: end}
    )
    builder.add_edge("finish", end)
    return shared.compile(builder, "plan_execute", setup)


graph = served(build_graph)
