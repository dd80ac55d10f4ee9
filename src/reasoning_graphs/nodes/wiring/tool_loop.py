"""The part every tool-using pattern shares: approve → act → observe, and finish.

A pattern adds its own ``think`` node and the edges out of it; this adds the
rest of the loop, so approvals, ordered or concurrent execution, budgets and
the honest stop are the same code in every pattern. A step that would decide
nothing is skipped: a turn whose calls all run as proposed, at once, goes
straight to ``act`` (:func:`to_settle`), and a round that leaves nothing to
record goes straight back (:func:`~reasoning_graphs.nodes.steps.observe.round_update`).

A call is triaged once and its arguments checked once; the turn's facts are read
once (:mod:`~reasoning_graphs.nodes.steps.turn_facts`), and the call then runs through
one chain of links around one request (:func:`~reasoning_graphs.nodes.steps.tool_task.
checked_call`). From the router that leaves the model's turn (``to_settle``) to the
router after its ``act`` task, one call of a ReAct run that no person decides enters
these modules of the package (measured by tracing, and kept true by
``tests/test_tool_call_path.py``), in the order it first enters them:

- ``nodes/wiring/tool_loop.py``: ``to_settle`` reads the facts, triages, routes;
- ``nodes/model/setup.py``: the run's setup and limits (a run with options of its own
  enters the context module too);
- ``question.py``, ``history.py``: the conversation's folds (answered calls, results),
  and the call's id;
- ``nodes/steps/turn_facts.py``: the turn's facts, read once;
- ``tools/registry.py``, ``tools/spec.py``: the tool, its schema and its marks;
- ``nodes/steps/seal.py``: approvals spent (the facts), a person's seal (the chain);
- ``nodes/guards/budget.py``, ``nodes/guards/loops.py``: calls left, repeated failures;
- ``nodes/steps/approve.py``: the triage of each call (``triage_turn``);
- ``tools/policy.py``: block rules, and whether a person must decide;
- ``nodes/steps/act.py``: ``next_calls`` sends the call; its ``act`` task records it;
- ``tools/injection.py``: the values a tool has injected;
- ``state.py``: the reducer that names the messages written;
- ``nodes/wiring/checked_graph.py``, ``nodes/wiring/agent_graph.py``,
  ``nodes/wiring/fresh_read.py``, ``nodes/wiring/routed.py``: the graph's own glue
  (the held run, its stream, the state a router reads);
- ``effects.py``: the task's body, on either face, with the tool's timeout;
- ``middleware.py``: the graph's ``wrap_tool_call`` hooks (none here);
- ``nodes/steps/tool_task.py``: the chain (seal, at most once, hooks, the run) around
  one request;
- ``nodes/steps/unknown_outcome.py``, ``call_journal.py``: at most once across a crash;
- ``tools/execute.py``, ``tools/output.py``: the tool's run and what it returned;
- ``nodes/model/trajectory.py``, ``metadata.py``: the one record of the decision.

That is 28 modules, more than the 10 a call should pass; a call a person decides
adds ``review.py`` and ``nodes/steps/edits.py`` (the ``approve`` node asks), and a
hook adds its own. LangGraph then saves the ``act`` task's writes (the observation,
the record) with the step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import get_type_hints

from langgraph.graph import END, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from reasoning_graphs.checkpointers import CheckpointerSpec, open_checkpointer
from reasoning_graphs.context import AgentContext
from reasoning_graphs.effects import effect_node
from reasoning_graphs.middleware import added_schemas, with_added_state
from reasoning_graphs.nodes.grounding.report import always
from reasoning_graphs.nodes.guards.stop import model_node
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.model.stream_transformers import graph_transformers
from reasoning_graphs.nodes.steps.act import ACT, make_act, next_calls
from reasoning_graphs.nodes.steps.approve import make_approve, settling, triage_turn
from reasoning_graphs.nodes.steps.finish import (
    AskFinal,
    after_outcome,
    ask_with_tools_off,
    make_finish,
)
from reasoning_graphs.nodes.steps.observe import make_observe, round_update
from reasoning_graphs.nodes.steps.reflect import REFLECT, Reflection, make_reflect
from reasoning_graphs.nodes.steps.turn_facts import turn_facts
from reasoning_graphs.nodes.steps.verify import make_report, verified
from reasoning_graphs.nodes.wiring.agent_graph import AgentGraph
from reasoning_graphs.nodes.wiring.checked_graph import checked
from reasoning_graphs.nodes.wiring.durability import with_sync_durability
from reasoning_graphs.nodes.wiring.question_hooks import add_question_hooks
from reasoning_graphs.question import (
    answered_ids,
    last_ai_message,
    model_calls_used,
    question_number,
)
from reasoning_graphs.state import AgentInput, AgentState
from reasoning_graphs.stores import StoreSpec, open_store
from reasoning_graphs.tracing import labelled

REPORT = "report"


def compile_agent(
    builder: StateGraph,
    checkpointer: CheckpointerSpec | None,
    name: str,
    *,
    setup: AgentSetup | None = None,
    subgraph: bool = False,
    store: StoreSpec | None = None,
) -> CompiledStateGraph:
    """Compile with checkpoints saved before the next step starts (``durability="sync"``).

    A string or path names the checkpointer
    (:func:`~reasoning_graphs.checkpointers.open_checkpointer`); the graph then
    holds its connection for as long as the graph lives. ``store`` is memory across threads,
    a store or a string naming one (:func:`~reasoning_graphs.stores.open_store`); the
    graph's nodes and tools reach it through the run (a subgraph through its parent's).

    LangGraph's default saves a step's checkpoint while the next one runs, so a
    hard kill can lose a finished tool call and run it again on resume; saving
    first costs a few milliseconds per step. A run may still pass ``durability``.
    Without a checkpointer of its own the graph keeps LangGraph's default: as a
    subgraph it follows its parent, and under ``langgraph dev`` the server decides.
    Either way, a run's input and options are checked before it starts, and a resume
    that answers nothing asks again (see :mod:`.checked_graph`); the tools of ``setup``
    are all that a run's options may name. Its middleware's ``before_agent`` and
    ``after_agent`` hooks join a pattern's graph (:mod:`.question_hooks`), not a subgraph's.

    Its v3 stream runs the transformers of ``setup``
    (:mod:`~reasoning_graphs.nodes.model.stream_transformers`): ``run.tool_calls``, and what
    its middleware and caller add.

    A pattern's graph carries its tracing labels (:func:`~reasoning_graphs.tracing.run_labels`);
    a ``subgraph`` (a plan step, a trial) runs under those of the pattern that runs it.
    """
    if checkpointer is not None:
        checkpointer = open_checkpointer(checkpointer)
    opened = None if store is None else open_store(store)
    if setup is not None and not subgraph and isinstance(builder, AgentGraph):
        add_question_hooks(builder, setup)
    tool_names = setup.registry.names() if setup is not None else ()
    transformers = setup.transformers if setup is not None else graph_transformers(())
    compiled = builder.compile(
        checkpointer=checkpointer, store=opened, name=name, transformers=transformers
    )
    graph: CompiledStateGraph = checked(compiled, tool_names)
    if not subgraph:
        graph = labelled(graph, name)
    if checkpointer is None:
        return graph
    return with_sync_durability(graph)


def agent_graph_builder(
    state_schema: type = AgentState,
    input_schema: type = AgentInput,
    context_schema: type[AgentContext] = AgentContext,
    *,
    setup: AgentSetup | None = None,
) -> AgentGraph:
    """An empty graph over the agent state (or a pattern's extension of it, and the fields
    the ``setup``'s middleware and state class add, which its input takes too), with the
    chat input and the run options Studio shows (a pattern's own extend the shared ones),
    or the user's class of run context where the setup names one."""
    added = added_schemas(setup.middleware, setup.state_schema) if setup is not None else []
    state = with_added_state(state_schema, added)
    given = with_added_state(input_schema, added, omit="input")
    context = setup.context_schema if setup is not None and setup.context_schema else None
    shown = with_added_state(state_schema, added, omit="output")  # fields a hook keeps private
    graph = AgentGraph(
        state,
        context_schema=context or context_schema,
        input_schema=given,
        output_schema=shown
        if get_type_hints(shown).keys() != get_type_hints(state).keys()
        else None,
    )
    graph.unread_input = frozenset(get_type_hints(state)) - frozenset(get_type_hints(given))
    graph.unread_input -= frozenset(get_type_hints(state_schema))
    return graph


def add_report(builder: StateGraph, setup: AgentSetup) -> str:
    """Add the question's last step, the grounding report of its answer (and with ``verify``
    on the model's check of it), and return its name: where every path that ends the
    question goes."""
    builder.add_node(REPORT, effect_node(REPORT, make_report(setup)))
    builder.add_edge(REPORT, END)
    return REPORT


def round_answered(state: AgentState) -> bool:
    """Whether every call of the latest round has its observation in ``state``. A task of
    a concurrent batch sees its own result and not yet the others'."""
    answered = answered_ids(state["messages"])
    reply = last_ai_message(state["messages"])
    return all(call["id"] in answered for call in reply.tool_calls)


def to_settle(state: AgentState, setup: AgentSetup) -> list[Send]:
    """Where a model turn of tool calls goes, after its one triage (:func:`triage_turn`):
    straight to ``act`` when every call runs as proposed and all of them start now (one
    call, or read-only calls together), else to ``approve`` with the triage, which records
    it, asks a person what needs one, and keeps the order the rest run in."""
    run = setup.for_run()
    facts = turn_facts(run, state, last_ai_message(state["messages"]))
    triage = triage_turn(run, state, facts)
    cleared = triage.runs_as_proposed()
    if cleared is not None:
        sends = next_calls(
            {**state, "to_run": cleared},
            run.registry,
            turn=triage.turn,
            step=triage.step,
            facts=facts,
        )
        if len(sends) == len(cleared):
            return sends
    return [Send("approve", settling(state, triage))]


@dataclass(frozen=True)
class Detour:
    """A node a round hands to instead of ``back_to`` when ``wanted`` (the state after the
    round) says so; the pattern adds the node and its way back."""

    node: str
    wanted: Callable[[AgentState], bool]


def add_tool_loop(
    builder: StateGraph,
    setup: AgentSetup,
    *,
    ask_final: AskFinal = ask_with_tools_off,
    back_to: str = "think",
    detour: Detour | None = None,
    report: bool = False,
    reflect: bool = False,
) -> None:
    """Add approve, act, observe and finish; a round hands back to ``back_to``, or to the
    ``detour`` it asks for. With ``reflect`` a round the run's options pick passes through
    ``reflect`` on its way back (:mod:`~reasoning_graphs.nodes.steps.reflect`). With
    ``report`` the steps that end the question (a tool's direct answer, ``finish``) write
    its grounding report (:func:`~reasoning_graphs.nodes.grounding.report.reported`); a
    step's subgraph leaves that to its pattern.

    The node that hands work to the loop (``back_to``) must end its turn with an
    ``AIMessage`` whose ``tool_calls`` are the calls to settle and run; a model
    writes them in ReAct, a plan executor writes them in the planning patterns.
    """

    def back(state: AgentState) -> str:
        if detour is not None and detour.wanted(state):
            return detour.node
        if reflect:
            run = setup.for_run()
            return REFLECT if Reflection.for_run(run).due(state, run.limits) else back_to
        return back_to

    def to_act(state: AgentState) -> list[Send] | str:
        run = setup.for_run()
        turn, step = question_number(state["messages"]), model_calls_used(state)
        sends = next_calls(state, run.registry, turn=turn, step=step)
        if sends:
            return sends
        if not round_answered(state) or round_update(state, run.limits) is not None:
            return "observe"  # concurrent calls meet there, each task seeing only its own result
        return back(state)

    def after_observe(state: AgentState) -> str:
        outcome = state.get("outcome")
        return back(state) if not outcome else after_outcome(outcome)  # answered: a tool's result

    def after_reflect(state: AgentState) -> str:
        outcome = state.get("outcome")
        return back_to if not outcome else after_outcome(outcome)  # a budget it spent

    builder.add_node("approve", make_approve(setup))
    builder.add_node(ACT, effect_node(ACT, make_act(setup, state_keys=frozenset(builder.channels))))
    finish = make_finish(setup, ask_final)
    builder.add_node("observe", effect_node("observe", make_observe(setup, report=report)))
    builder.add_node(
        "finish", effect_node("finish", verified(setup, finish, always) if report else finish)
    )
    backs = [back_to, *([detour.node] if detour else []), *([REFLECT] if reflect else [])]
    builder.add_conditional_edges("approve", to_act, [ACT, "observe", *backs])
    builder.add_conditional_edges(ACT, to_act, [ACT, "observe", *backs])
    builder.add_conditional_edges(
        "observe", after_observe, {**{n: n for n in backs}, "finish": "finish", END: END}
    )
    if reflect:
        builder.add_node(REFLECT, model_node(REFLECT, make_reflect(setup)))
        builder.add_conditional_edges(
            REFLECT, after_reflect, {back_to: back_to, "finish": "finish", END: END}
        )
    builder.add_edge("finish", END)
