"""The part every tool-using pattern shares: approve → act → observe, and finish.

A pattern adds its own ``think`` node and the edges out of it; this adds the
rest of the loop, so approvals, ordered or concurrent execution, budgets and
the honest stop are the same code in every pattern. A step that would decide
nothing is skipped: a turn whose calls all run as proposed, at once, goes
straight to ``act`` (:func:`to_settle`), and a round that leaves nothing to
record goes straight back (:func:`~reasoning_graphs.nodes.steps.observe.round_update`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from langgraph.graph import END, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from reasoning_graphs.checkpointers import CheckpointerSpec, open_checkpointer
from reasoning_graphs.context import AgentContext
from reasoning_graphs.effects import effect_node
from reasoning_graphs.nodes.grounding.report import always, report, reported
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.steps.act import ACT, make_act, next_calls
from reasoning_graphs.nodes.steps.approve import cleared_as_proposed, make_approve
from reasoning_graphs.nodes.steps.finish import (
    AskFinal,
    after_outcome,
    ask_with_tools_off,
    make_finish,
)
from reasoning_graphs.nodes.steps.observe import make_observe, round_update
from reasoning_graphs.nodes.wiring.checked_graph import checked
from reasoning_graphs.nodes.wiring.durability import with_sync_durability
from reasoning_graphs.question import (
    answered_ids,
    last_ai_message,
    model_calls_used,
    question_number,
)
from reasoning_graphs.state import AgentInput, AgentState
from reasoning_graphs.tracing import labelled

REPORT = "report"


def compile_agent(
    builder: StateGraph,
    checkpointer: CheckpointerSpec | None,
    name: str,
    *,
    tool_names: Sequence[str] = (),
    subgraph: bool = False,
) -> CompiledStateGraph:
    """Compile with checkpoints saved before the next step starts (``durability="sync"``).

    A string or path names the checkpointer
    (:func:`~reasoning_graphs.checkpointers.open_checkpointer`); the graph then
    holds its connection for as long as the graph lives.

    LangGraph's default saves a step's checkpoint while the next one runs, so a
    hard kill can lose a finished tool call and run it again on resume; saving
    first costs a few milliseconds per step. A run may still pass ``durability``.
    Without a checkpointer of its own the graph keeps LangGraph's default: as a
    subgraph it follows its parent, and under ``langgraph dev`` the server decides.
    Either way, a run's input and options are checked before it starts, and a resume
    that answers nothing asks again (see :mod:`.checked_graph`); ``tool_names`` are all
    that a run's options may name.

    A pattern's graph carries its tracing labels (:func:`~reasoning_graphs.tracing.run_labels`);
    a ``subgraph`` (a plan step, a trial) runs under those of the pattern that runs it.
    """
    if checkpointer is not None:
        checkpointer = open_checkpointer(checkpointer)
    graph = checked(builder.compile(checkpointer=checkpointer, name=name), tool_names)
    if not subgraph:
        graph = labelled(graph, name)
    if checkpointer is None:
        return graph
    return with_sync_durability(graph)


def agent_graph_builder(
    state_schema: type = AgentState,
    input_schema: type = AgentInput,
    context_schema: type[AgentContext] = AgentContext,
) -> StateGraph:
    """An empty graph over the agent state (or a pattern's extension of it), with the
    chat input and the run options Studio shows (a pattern's own extend the shared ones)."""
    return StateGraph(state_schema, context_schema=context_schema, input_schema=input_schema)


def add_report(builder: StateGraph) -> str:
    """Add the question's last step, the grounding report of its answer (no model call),
    and return its name: where every path that ends the question goes."""
    builder.add_node(REPORT, report)
    builder.add_edge(REPORT, END)
    return REPORT


def round_answered(state: AgentState) -> bool:
    """Whether every call of the latest round has its observation in ``state``. A task of
    a concurrent batch sees its own result and not yet the others'."""
    answered = answered_ids(state["messages"])
    reply = last_ai_message(state["messages"])
    return all(call["id"] in answered for call in reply.tool_calls)


def to_settle(state: AgentState, setup: AgentSetup) -> list[Send] | Literal["approve"]:
    """Where a model turn of tool calls goes: straight to ``act`` when every call runs as
    proposed and all of them start now (one call, or read-only calls together), else to
    ``approve``, which settles them and records the order the rest run in."""
    run = setup.for_run()
    cleared = cleared_as_proposed(run, state)
    if cleared is None:
        return "approve"
    turn, step = question_number(state["messages"]), model_calls_used(state)
    sends = next_calls({**state, "to_run": cleared}, run.registry, turn=turn, step=step)
    return sends if len(sends) == len(cleared) else "approve"


def add_tool_loop(
    builder: StateGraph,
    setup: AgentSetup,
    *,
    ask_final: AskFinal = ask_with_tools_off,
    back_to: str = "think",
    report: bool = False,
) -> None:
    """Add approve, act, observe and finish; ``observe`` hands back to ``back_to``. With
    ``report`` the steps that end the question (a tool's direct answer, ``finish``) write
    its grounding report (:func:`~reasoning_graphs.nodes.grounding.report.reported`); a step's
    subgraph leaves that to its pattern.

    The node that hands work to the loop (``back_to``) must end its turn with an
    ``AIMessage`` whose ``tool_calls`` are the calls to settle and run; a model
    writes them in ReAct, a plan executor writes them in the planning patterns.
    """

    def to_act(state: AgentState) -> list[Send] | str:
        run = setup.for_run()
        turn, step = question_number(state["messages"]), model_calls_used(state)
        sends = next_calls(state, run.registry, turn=turn, step=step)
        if sends:
            return sends
        if not round_answered(state) or round_update(state, run.limits) is not None:
            return "observe"  # concurrent calls meet there, each task seeing only its own result
        return back_to

    def after_observe(state: AgentState) -> str:
        outcome = state.get("outcome")
        return back_to if not outcome else after_outcome(outcome)  # answered: a tool's result

    builder.add_node("approve", make_approve(setup))
    builder.add_node(ACT, effect_node(ACT, make_act(setup, state_keys=frozenset(builder.channels))))
    finish = make_finish(setup, ask_final)
    if report:
        finish = reported(finish, always)
    builder.add_node("observe", make_observe(setup, report=report))
    builder.add_node("finish", effect_node("finish", finish))
    builder.add_conditional_edges("approve", to_act, [ACT, "observe", back_to])
    builder.add_conditional_edges(ACT, to_act, [ACT, "observe", back_to])
    builder.add_conditional_edges(
        "observe", after_observe, {back_to: back_to, "finish": "finish", END: END}
    )
    builder.add_edge("finish", END)
