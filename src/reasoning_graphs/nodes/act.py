"""``act``: run one cleared tool call and record its observation.

Each call is its own task: LangGraph saves a finished task's writes at once,
so after a crash only the calls that had not finished run again. Read-only
calls of a turn are sent together and overlap; stateful ones are sent one per
super-step, in the model's order (see :func:`next_calls`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AnyMessage, ToolMessage
from langgraph.types import Send
from typing_extensions import TypedDict

from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.setup import AgentSetup
from reasoning_graphs.nodes.trajectory import action_event
from reasoning_graphs.state import PlannedCall
from reasoning_graphs.tools.execute import OBSERVATIONS_ARGUMENT, execute_call
from reasoning_graphs.tools.registry import ToolRegistry

ACT = "act"


class ActInput(TypedDict):
    """What one ``act`` task receives."""

    call: PlannedCall
    turn: int
    step: int
    observations: dict[str, str]


def make_act(setup: AgentSetup) -> Callable[[ActInput], Body[dict[str, Any]]]:
    """Build the ``act`` node for ``setup``."""

    def act(task: ActInput) -> Body[dict[str, Any]]:
        run = setup.for_run()
        call = task["call"]
        result = yield from execute_call(
            run.registry,
            call["name"],
            call["args"],
            call_id=call["id"],
            observations=task["observations"],
        )
        message = ToolMessage(
            result.content,
            tool_call_id=call["id"],
            name=call["name"],
            status=result.status,
            response_metadata={"decision": call["decision"]},
        )
        event = action_event(
            turn=task["turn"],
            step=task["step"],
            call_id=call["id"],
            tool=call["name"],
            args=call["args"],
            observation=result.content,
            status=result.status,
            decision=call["decision"],
            duration_ms=result.duration_ms,
        )
        update: dict[str, Any] = {"messages": [message], "trajectory": [event]}
        if result.ref and result.full_text is not None:
            update["observations"] = {result.ref: result.full_text}
        return update

    return act


def runs_concurrently(calls: Sequence[PlannedCall], registry: ToolRegistry) -> bool:
    """Calls may overlap only when every tool involved is marked concurrency-safe."""
    return all(registry.is_read_only(call["name"]) for call in calls)


def next_calls(
    state: Mapping[str, Any], registry: ToolRegistry, *, turn: int, step: int
) -> list[Send]:
    """The ``act`` tasks to start now: all pending calls at once, or the next one in order."""
    pending: list[PlannedCall] = state.get("pending") or []
    done = _answered_ids(state["messages"])
    remaining = [call for call in pending if call["id"] not in done]
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
    call: PlannedCall, state: Mapping[str, Any], registry: ToolRegistry, turn: int, step: int
) -> ActInput:
    spec = registry.get(call["name"])
    needs_store = spec is not None and OBSERVATIONS_ARGUMENT in spec.injected_arguments()
    observations = dict(state.get("observations") or {}) if needs_store else {}
    return ActInput(call=call, turn=turn, step=step, observations=observations)


def _answered_ids(messages: Sequence[AnyMessage]) -> set[str]:
    return {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
