"""One cleared call run, with the checks every runner makes, and as a plain, saveable record.

Every runner of a cleared call goes through :func:`checked_call`: ReAct-style loops
run each call as an ``act`` task. Patterns that run calls from
inside one node — LLM Compiler's ``schedule``, LATS's ``act`` — wrap each call in
a durable task (:func:`~reasoning_graphs.effects.durable_task`) so a finished
call's result is saved at once; the task's body runs the call with
:func:`run_cleared`. Such a node writes only observations, so a ``Command`` the
tool returns is not applied, and the observation says why. A call that started
before a crash and whose result was lost is not run again unseen
(:mod:`.unknown_outcome`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from langchain_core.messages import ToolMessage
from typing_extensions import TypedDict

from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.model.setup import RunScope
from reasoning_graphs.nodes.steps.seal import unapproved
from reasoning_graphs.nodes.steps.unknown_outcome import CallOutcome, run_at_most_once
from reasoning_graphs.state import CallDecision, ClearedCall
from reasoning_graphs.tools.execute import ToolResult, execute_call


class ToolRun(TypedDict):
    """What one call produced, as a durable task saves it.

    Attributes:
        content: The observation as text (cut when long).
        status: ``success`` or ``error``.
        duration_ms: How long the tool ran.
        ref: Where the full text of a cut observation is kept.
        full_text: The full text of a cut observation.
        message: The tool's own ``ToolMessage``, when it returned one.
        decision: How the call was settled: as cleared, or ``blocked``, or as a
            person decided when it was put to them again after a crash.
    """

    content: str
    status: Literal["success", "error"]
    duration_ms: float
    ref: str | None
    full_text: str | None
    message: ToolMessage | None
    decision: CallDecision


def run_cleared(
    run: RunScope,
    call: ClearedCall,
    observations: Mapping[str, str],
    state: Mapping[str, Any],
    *,
    no_command: str,
) -> Body[ToolRun]:
    """Run ``call``; a ``Command`` it returns is told in the observation, with ``no_command``
    as the reason, and not applied (see :func:`checked_call`)."""
    outcome = yield from checked_call(run, call, observations, state)
    result = outcome.result.without_command(no_command)
    return ToolRun(
        content=result.content,
        status=result.status,
        duration_ms=result.duration_ms,
        ref=result.ref,
        full_text=result.full_text,
        message=result.message,
        decision=outcome.decision,
    )


def checked_call(
    run: RunScope,
    call: ClearedCall,
    observations: Mapping[str, str],
    state: Mapping[str, Any] | None,
) -> Body[CallOutcome]:
    """Run a cleared call the way every runner does (``act``, and :func:`run_cleared`).

    A call that needs a person and carries no valid seal of their decision is refused
    (:func:`~reasoning_graphs.nodes.steps.seal.unapproved`); any other runs at most once across
    a crash where it must not simply repeat (:mod:`.unknown_outcome`).
    """
    refused = unapproved(run.policy, run.registry, call)
    if refused is not None:
        return CallOutcome(ToolResult(refused, "error", 0.0), "blocked")
    execute = execute_call(
        run.registry,
        call["name"],
        call["args"],
        call_id=call["id"],
        observations=observations,
        state=state,
    )
    return (yield from run_at_most_once(run, call, execute))
