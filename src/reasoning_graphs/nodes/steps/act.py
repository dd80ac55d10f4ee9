"""``act``: run one cleared tool call and record its observation.

Each call is its own task: LangGraph saves a finished task's writes at once,
so after a crash only the calls that had not finished run again. Read-only
calls of a turn are sent together and overlap; stateful ones are sent one per
super-step, in the model's order (see :func:`next_calls`).

A tool may answer with a ``Command``, as under LangGraph's ``ToolNode``. Its
``update`` is applied to the state — the call's ``ToolMessage`` in it becomes
the observation; keys this graph's state lacks are named in the observation
instead of vanishing. ``goto=END`` ends the turn with the tool's result as the
answer (like ``return_direct``); other gotos are named in the observation, as
the loop chooses its next step itself. A command for the parent graph
(``graph=Command.PARENT``, e.g. a hand-off) is passed up unchanged.

A call that started before a crash and whose result was lost is not run again
unseen (:mod:`.unknown_outcome`); a person who rejects it then is remembered as
for any rejection.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from langgraph.types import Command, Send
from typing_extensions import NotRequired, TypedDict

from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.model.trajectory import record_call
from reasoning_graphs.nodes.steps.seal import spent_seals
from reasoning_graphs.nodes.steps.tool_task import checked_call
from reasoning_graphs.nodes.steps.turn_facts import TurnFacts
from reasoning_graphs.question import answered_ids, call_signature
from reasoning_graphs.state import EXECUTED, AgentUpdate, ClearedCall
from reasoning_graphs.tools.execute import ToolResult
from reasoning_graphs.tools.injection import task_state
from reasoning_graphs.tools.registry import ToolRegistry

ACT = "act"

NO_SUCH_STATE = "this graph's state has no such key"
OWN_ROUTE = "this graph's loop chooses its next step itself"


class ActInput(TypedDict):
    """What one ``act`` task receives.

    Attributes:
        call: The cleared call.
        turn: The question's number.
        step: The model step that proposed the call.
        observations: Stored full texts, for a tool that reads them.
        reads_state: The tool injects the graph state (``InjectedState``, ``ToolRuntime``),
            which the task reads when it runs (:func:`task_state`).
    """

    call: ClearedCall
    turn: int
    step: int
    observations: dict[str, str]
    reads_state: NotRequired[bool]


def make_act(
    setup: AgentSetup, state_keys: Collection[str] | None = None
) -> Callable[[ActInput], Body[AgentUpdate | list[Command]]]:
    """Build the ``act`` node for ``setup``; ``state_keys`` are the keys its graph's state has."""

    def act(task: ActInput) -> Body[AgentUpdate | list[Command]]:
        call = task["call"]
        if "answer" in call:  # settled without running: its observation, in its place
            return {"messages": [call["answer"]]}
        run = setup.for_run()
        state = task_state(state_keys or ()) if _reads_state(run, task) else None
        outcome = yield from checked_call(run, call, task["observations"], state)
        result = _with_unapplied_noted(outcome.result, state_keys)
        message, event = record_call(
            call,
            result.to_message(call["id"], call["name"]),
            outcome.decision,
            turn=task["turn"],
            step=task["step"],
            observation=result.content,
            duration_ms=result.duration_ms,
            direct=result.return_direct,
            acted=outcome.decision in EXECUTED and not run.registry.is_read_only(call["name"]),
        )
        if "seal" in call and outcome.decision != "blocked":  # spent: the ledger keeps it
            event["seal"] = call["seal"]
        if run.registry.is_upkeep(call["name"]):
            event["upkeep"] = True
        update: AgentUpdate = {
            "messages": [message],
            "trajectory": [event],
        }
        if result.ref and result.full_text is not None:
            update["observations"] = {result.ref: result.full_text}
        if outcome.rejection is not None:
            update["rejected"] = {call_signature(call["name"], call["args"]): outcome.rejection}
        if result.command is None:
            return update
        writes = [
            (key, value)
            for key, value in result.command.updates
            if state_keys is None or key in state_keys
        ]
        return [Command(update=[*update.items(), *writes]), *result.command.parent]

    return act


def _reads_state(run: RunScope, task: ActInput) -> bool:
    """Whether the call's run needs the graph state: its tool injects it, a ``when`` setting
    of its tool may read it, or a middleware's tool hooks get it in their request."""
    if task.get("reads_state") or run.setup.tool_hooks:
        return True
    asking = run.setup.asking.get(task["call"]["name"])
    return asking is not None and asking.when is not None


def _with_unapplied_noted(result: ToolResult, state_keys: Collection[str] | None) -> ToolResult:
    """Name in the observation what of the tool's command this loop will not do."""
    command = result.command
    if command is None:
        return result
    missing = [
        key for key, _ in command.updates if state_keys is not None and key not in state_keys
    ]
    if missing:
        result = result.with_note(
            command.requests(keys=missing, goto=False, parent=False), NO_SUCH_STATE
        )
    return result.with_note(command.requests(keys=(), parent=False), OWN_ROUTE)


def runs_concurrently(calls: Sequence[ClearedCall], registry: ToolRegistry) -> bool:
    """Calls may overlap only when every tool involved is marked concurrency-safe."""
    return all(registry.is_read_only(call["name"]) for call in calls)


def next_calls(
    state: Mapping[str, Any],
    registry: ToolRegistry,
    *,
    turn: int,
    step: int,
    facts: TurnFacts | None = None,
) -> list[Send]:
    """The ``act`` tasks to start now: all pending calls at once, or the next one in order.
    ``facts``: the turn's, when the router read them for its triage."""
    pending: list[ClearedCall] = state.get("to_run") or []
    if facts is None:
        done, spent = answered_ids(state["messages"]), spent_seals(state.get("trajectory"))
    else:
        done, spent = facts.answered, facts.spent
    remaining = [
        call for call in pending if call["id"] not in done and call.get("seal") not in spent
    ]
    if not remaining:
        return []
    if runs_concurrently(pending, registry):
        if len(remaining) < len(pending):
            return []  # the concurrent batch was already sent together
        batch = remaining
    else:
        batch = remaining[:1]
    return [Send(ACT, _task(call, state, registry, turn, step)) for call in batch]


def _task(
    call: ClearedCall, state: Mapping[str, Any], registry: ToolRegistry, turn: int, step: int
) -> ActInput:
    spec = registry.get(call["name"])
    injections = spec.injections if spec is not None else None
    observations = (
        dict(state.get("observations") or {}) if injections and injections.observations else {}
    )
    task = ActInput(call=call, turn=turn, step=step, observations=observations)
    if injections and injections.needs_state:
        task["reads_state"] = True
    return task
