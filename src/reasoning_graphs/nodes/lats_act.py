"""``act``: settle and run the tool calls of a fresh expansion, one observation per child.

The calls of all new children are settled together with the approve node's
triage (:func:`~reasoning_graphs.nodes.approve.settle_calls`): one interrupt
for the dangerous ones, and a call rejected earlier — in any branch — is
answered from that decision without asking again. Nothing runs before the
decision, so re-running the node on resume repeats no side effect.

The cleared calls then run through the tool layer, each as a durable
LangGraph ``@task`` (a crash re-runs only what had not finished): read-only
calls together, stateful ones one after another in the children's order.
The children are alternatives, but they share one world: a stateful call in
one branch is seen by its siblings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages.tool import ToolCall

from reasoning_graphs.effects import Body, Gather, durable_task
from reasoning_graphs.nodes.approve import TurnTriage, settle_calls
from reasoning_graphs.nodes.lats_tree import LatsNode, children, expansions, update_nodes
from reasoning_graphs.nodes.setup import AgentSetup
from reasoning_graphs.nodes.trajectory import action_event
from reasoning_graphs.nodes.turn import decision_of, turn_number
from reasoning_graphs.state import PlannedCall
from reasoning_graphs.tools.execute import execute_call
from reasoning_graphs.tools.registry import ToolRegistry


def _run_call(
    registry: ToolRegistry,
    call: PlannedCall,
    observations: Mapping[str, str],
    state: Mapping[str, Any],
) -> Body[dict[str, Any]]:
    """Run one cleared call; its result is saved as soon as it finishes.

    A ``Command`` the tool returns is not applied — the children are
    alternatives, so no branch may change the shared state — and its
    observation says so.
    """
    result = yield from execute_call(
        registry,
        call["name"],
        call["args"],
        call_id=call["id"],
        observations=observations,
        state=state,
    )
    result = result.without_command(TREE_ONLY)
    return {
        "content": result.content,
        "status": result.status,
        "duration_ms": result.duration_ms,
        "ref": result.ref,
        "full_text": result.full_text,
    }


run_call = durable_task("run_call", _run_call)

TREE_ONLY = "LATS keeps tool results only as observations in its search tree"


def make_act(setup: AgentSetup) -> Callable[[dict[str, Any]], Body[dict[str, Any]]]:
    """Build the LATS ``act`` node for ``setup``."""

    def act(state: dict[str, Any]) -> Body[dict[str, Any]]:
        run = setup.for_run()
        tree = state["tree"]
        fresh = [
            node
            for node in children(tree, state["selected"])
            if node["call"] is not None and node["observation"] is None
        ]
        if not fresh:
            return {}
        triage = TurnTriage(turn=turn_number(state["messages"]), step=expansions(tree))
        settle_calls(run, state, [node["call"] for node in fresh], triage)

        cleared = [call for _, call in sorted(triage.planned, key=lambda item: item[0])]
        results = yield from _run_cleared(run.registry, cleared, state)
        by_call = {node["call"]["id"]: node for node in fresh}
        changes: dict[int, dict[str, object]] = {}
        events = [{**event, "node": by_call[event["id"]]["id"]} for event in triage.events]
        stored: dict[str, str] = {}
        for message in triage.answered:
            node = by_call[message.tool_call_id]
            changes[node["id"]] = {
                "observation": str(message.content),
                "status": message.status,
                "decision": decision_of(message),
            }
        for call in cleared:
            node, result = by_call[call["id"]], results[call["id"]]
            changes[node["id"]] = {
                "call": ToolCall(
                    name=call["name"], args=call["args"], id=call["id"], type="tool_call"
                ),
                "observation": result["content"],
                "status": result["status"],
                "decision": call["decision"],
            }
            events.append(_event(triage, node, call, result))
            if result["ref"]:
                stored[result["ref"]] = result["full_text"]
        update: dict[str, Any] = {
            "tree": update_nodes(tree, changes),
            "trajectory": events,
            "rejected": triage.rejected,
        }
        if stored:
            update["observations"] = stored
        return update

    return act


def _run_cleared(
    registry: ToolRegistry, calls: list[PlannedCall], state: Mapping[str, Any]
) -> Body[dict[str, dict[str, Any]]]:
    """Read-only calls all at once, stateful ones in order after them; results by call id."""
    observations = state.get("observations") or {}
    together = [call for call in calls if registry.is_read_only(call["name"])]
    done = yield Gather([run_call(registry, call, observations, state) for call in together])
    results = dict(zip([c["id"] for c in together], done, strict=True))
    for call in calls:
        if not registry.is_read_only(call["name"]):
            results[call["id"]] = yield run_call(registry, call, observations, state)
    return results


def _event(
    triage: TurnTriage, node: LatsNode, call: PlannedCall, result: Mapping[str, Any]
) -> dict[str, Any]:
    event = action_event(
        turn=triage.turn,
        step=triage.step,
        call_id=call["id"],
        tool=call["name"],
        args=call["args"],
        observation=result["content"],
        status=result["status"],
        decision=call["decision"],
        duration_ms=result["duration_ms"],
    )
    return {**event, "node": node["id"]}
