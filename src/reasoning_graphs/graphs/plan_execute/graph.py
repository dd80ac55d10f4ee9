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

from collections.abc import Callable, Iterable
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RetryPolicy
from typing_extensions import Unpack

from reasoning_graphs.checkpointers import CheckpointerSpec
from reasoning_graphs.effects import effect_node
from reasoning_graphs.graphs.plan_execute.context import PlanExecuteContext
from reasoning_graphs.graphs.plan_execute.execute import make_execute
from reasoning_graphs.graphs.plan_execute.finish import make_plan_finish
from reasoning_graphs.graphs.plan_execute.plan import make_plan, make_replan
from reasoning_graphs.graphs.plan_execute.state import PlanExecuteState
from reasoning_graphs.nodes.guards.stop import call_stopped, model_node
from reasoning_graphs.nodes.model.setup import AgentOptions, agent_setup
from reasoning_graphs.nodes.steps.finish import after_outcome
from reasoning_graphs.nodes.wiring.react_loop import build_step_graph
from reasoning_graphs.nodes.wiring.tool_loop import add_report, agent_graph_builder, compile_agent
from reasoning_graphs.tools.builtins import server_tools
from reasoning_graphs.tools.spec import ToolSpec


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


def build_graph(
    model: BaseChatModel | str | None = None,
    tools: Iterable[BaseTool | Callable[..., Any] | ToolSpec] | None = None,
    checkpointer: CheckpointerSpec | None = None,
    *,
    max_replans: int = 3,
    max_plan_steps: int = 6,
    retry: RetryPolicy | None = None,
    **options: Unpack[AgentOptions],
) -> CompiledStateGraph:
    """Build the Plan-and-Execute graph.

    Args:
        model: A chat model, a model spec (``"openai:gpt-4o-mini"``, ``"local"``) or
            ``None`` to resolve the default at run time. It must support
            ``with_structured_output`` for planning and tool calling for the steps.
        tools: Tools or tool specs; ``None`` for the built-in tools.
        checkpointer: Where runs are saved; the step subgraphs save into it too.
            A saver, or a string naming one (see :mod:`reasoning_graphs.checkpointers`).
        max_replans: Plan revisions per question before an incomplete answer.
        max_plan_steps: Steps a plan or revision may hold; extra steps are dropped.
        retry: Retry policy for model calls (default: backoff on transient errors).
        **options: Budgets, approval lists, block rules and the executor's system
            prompt; ``max_steps`` and ``token_budget`` cover the whole question —
            planning, every step's calls, revisions and the closing answer
            (see :class:`~reasoning_graphs.nodes.model.setup.AgentOptions`).

    Example:
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
    tools = None if tools is None else list(tools)  # both setups below read them
    step_graph = build_step_graph(model, tools, retry=retry, **options)
    setup = agent_setup(model, tools, retry, **options)
    plan = make_plan(setup, max_steps=max_plan_steps)
    replan = make_replan(setup, max_replans=max_replans, max_steps=max_plan_steps)

    builder = agent_graph_builder(PlanExecuteState, context_schema=PlanExecuteContext)
    builder.add_node("plan", model_node("plan", plan))
    builder.add_node("execute", make_execute(step_graph))
    builder.add_node("replan", model_node("replan", replan))
    builder.add_node("finish", effect_node("finish", make_plan_finish(setup)))
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", after_plan, ["execute", "finish"])
    builder.add_conditional_edges("execute", after_execute, ["execute", "replan"])
    end = add_report(builder)
    builder.add_conditional_edges(
        "replan", after_replan, {"execute": "execute", "finish": "finish", END: end}
    )
    builder.add_edge("finish", end)
    return compile_agent(builder, checkpointer, "plan_execute", tool_names=setup.registry.names())


graph = build_graph(tools=server_tools())
"""Checkpointer-free graph for ``langgraph dev`` (the server brings its own persistence);
its tools work in a folder per thread (:func:`~reasoning_graphs.tools.builtins.server_tools`)."""
