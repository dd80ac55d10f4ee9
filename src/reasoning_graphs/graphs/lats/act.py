"""``act``: settle and run the tool calls of a fresh expansion, one observation per child.

The calls of all new children are settled together with the approve node's
triage (:func:`~reasoning_graphs.nodes.steps.approve.settle_calls`): one interrupt
for the dangerous ones, and a call rejected earlier — in any branch — is
answered from that decision without asking again. Nothing runs before the
decision, so re-running the node on resume repeats no side effect.

The decisions go into the tree, and the cleared calls run through the tool
layer in passes: each run of the node (one LangGraph super-step) runs the
read-only calls together and then at most one stateful call, in the
children's order; the graph runs the node again while cleared calls wait.
With ``durability="sync"`` a pass's checkpoint is saved before the next pass
starts, so a stateful call that finished is never run again after a crash —
ReAct's guarantee. Each call is also a durable LangGraph ``@task``, so a
crash inside a pass re-runs only the read-only calls whose results had not
been written yet (at least once, as in ReAct: a kill in the milliseconds
between a call finishing and its pass being saved repeats that call). The
children are alternatives, but they share one world: a stateful call in one
branch is seen by its siblings.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from langchain_core.messages.tool import ToolCall

from reasoning_graphs.effects import Body, Gather, durable_task
from reasoning_graphs.graphs.lats.state import LatsState, TreeUpdate, selected_leaf
from reasoning_graphs.graphs.lats.tree import (
    LatsNode,
    LatsTree,
    NodeChange,
    call_of,
    children,
    expansions,
    update_nodes,
)
from reasoning_graphs.metadata import decision_of
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.model.trajectory import action_event
from reasoning_graphs.nodes.steps.approve import TurnTriage, settle_calls
from reasoning_graphs.nodes.steps.seal import proof
from reasoning_graphs.nodes.steps.tool_task import ToolRun, run_cleared
from reasoning_graphs.question import question_number, runtime_id
from reasoning_graphs.state import ClearedCall, TrajectoryRecord
from reasoning_graphs.tools.registry import ToolRegistry

RESULTS_STAY_IN_TREE = "LATS keeps tool results only as observations in its search tree"
"""Why a ``Command`` a tool returns is not applied: the children are alternatives,
so no branch may change the shared state."""

run_call = durable_task("run_call", partial(run_cleared, no_command=RESULTS_STAY_IN_TREE))
"""One cleared call as a durable task: its result is saved as soon as it finishes."""


def make_act(setup: AgentSetup) -> Callable[[LatsState], Body[TreeUpdate]]:
    """Build the LATS ``act`` node; it runs again while :func:`cleared_to_run` calls wait."""

    def act(state: LatsState) -> Body[TreeUpdate]:
        run = setup.for_run()
        tree, leaf = state["tree"], selected_leaf(state)
        turn, step = question_number(state["messages"]), expansions(tree)
        undecided = [node for node in unobserved_calls(tree, leaf) if node["decision"] is None]
        changes: dict[int, NodeChange] = {}
        update: TreeUpdate = {}
        events: list[TrajectoryRecord] = []
        if undecided:
            triage = TurnTriage(turn=turn, step=step)
            asked = settle_calls(run, state, [call_of(node) for node in undecided], triage)
            changes = _decisions(undecided, triage)
            by_call = {call_of(node)["id"]: node["id"] for node in undecided}
            events = [{**e, "node": by_call[e["id"]]} for e in triage.events]
            update["rejected"] = triage.rejected
            if triage.stop is not None:  # a tool-call limit ended the question
                update["outcome"] = {"status": "incomplete", "reason": triage.stop}
                return {**update, "trajectory": events, "tree": update_nodes(tree, changes)}
            tree = update_nodes(tree, changes)
            if asked:  # the person's answer is saved with this step; the calls run next
                return {**update, "trajectory": events, "tree": tree}

        this_pass = _this_pass(run.registry, cleared_to_run(tree, leaf))
        results = yield from _run_pass(run, this_pass, state)
        stored: dict[str, str] = {}
        for node, result in zip(this_pass, results, strict=True):
            call = call_of(node)
            changes[node["id"]] = {
                **changes.get(node["id"], {}),
                "observation": result["content"],
                "status": result["status"],
                "decision": result["decision"],
            }
            event = action_event(
                turn=turn,
                step=step,
                call_id=runtime_id(call),
                tool=call["name"],
                args=call["args"],
                observation=result["content"],
                status=result["status"],
                decision=result["decision"],
                duration_ms=result["duration_ms"],
            )
            events.append({**event, "node": node["id"]})
            if result["ref"] and result["full_text"] is not None:
                stored[result["ref"]] = result["full_text"]
        if not changes:
            return {}
        update["tree"] = update_nodes(state["tree"], changes)
        update["trajectory"] = events
        if stored:
            update["observations"] = stored
        return update

    return act


def unobserved_calls(tree: LatsTree, leaf: int) -> list[LatsNode]:
    """The leaf's new children that call a tool and have no observation yet, in order."""
    return [
        node
        for node in children(tree, leaf)
        if node["call"] is not None and node["observation"] is None
    ]


def cleared_to_run(tree: LatsTree, leaf: int) -> list[LatsNode]:
    """Calls settled to run (approved, edited or automatic) that have not run yet.

    A call settled without running gets its observation with its decision, so a
    decided call still without an observation is one cleared to run.
    """
    return [node for node in unobserved_calls(tree, leaf) if node["decision"] is not None]


def _decisions(nodes: list[LatsNode], triage: TurnTriage) -> dict[int, NodeChange]:
    """Each node's decision: an observation for calls settled without running, and
    for cleared ones the arguments they will run with."""
    by_call = {call_of(node)["id"]: node for node in nodes}
    changes: dict[int, NodeChange] = {}
    for message in triage.answered:
        changes[by_call[message.tool_call_id]["id"]] = {
            "observation": str(message.content),
            "status": message.status,
            "decision": decision_of(message),
        }
    for _, call in triage.cleared:
        changes[by_call[call["id"]]["id"]] = {
            "call": ToolCall(name=call["name"], args=call["args"], id=call["id"], type="tool_call"),
            "decision": call["decision"],
            **proof(call),
        }
    return changes


def _this_pass(registry: ToolRegistry, waiting: list[LatsNode]) -> list[LatsNode]:
    """What one run of ``act`` executes: every read-only call and the first stateful one.

    One stateful call per run of the node, like ReAct's one call per ``act``
    task: the node's update holds its result and is checkpointed before the
    next run starts, so a finished stateful call is saved before the next begins.
    """
    read_only = [node for node in waiting if registry.is_read_only(call_of(node)["name"])]
    stateful = [node for node in waiting if node not in read_only]
    return read_only + stateful[:1]


def _run_pass(run: RunScope, this_pass: list[LatsNode], state: LatsState) -> Body[list[ToolRun]]:
    """The pass's read-only calls all at once, then its stateful one; results in pass order."""
    observations = state.get("observations") or {}
    tasks = [run_call(run, _cleared_call(node), observations, state) for node in this_pass]
    read_only = sum(run.registry.is_read_only(call_of(node)["name"]) for node in this_pass)
    results: list[ToolRun] = (yield Gather(tasks[:read_only])) if read_only else []
    for task in tasks[read_only:]:
        results.append((yield task))
    return results


def _cleared_call(node: LatsNode) -> ClearedCall:
    """The node's call as the tool layer runs it, with how it was cleared."""
    call = call_of(node)
    return ClearedCall(
        id=runtime_id(call),
        name=call["name"],
        args=call["args"],
        decision=node["decision"] or "auto",
        **proof(node),
    )
