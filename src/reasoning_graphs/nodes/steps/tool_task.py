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

import time
from collections.abc import Mapping
from typing import Any, Literal

from langchain.agents.middleware import ToolCallRequest
from langchain_core.messages import ToolCall, ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import get_runtime
from typing_extensions import TypedDict

from reasoning_graphs.effects import Body
from reasoning_graphs.middleware import TOOL_HOOKS, Chain, FaceNotWritten
from reasoning_graphs.nodes.model.setup import RunScope
from reasoning_graphs.nodes.steps.seal import unapproved
from reasoning_graphs.nodes.steps.unknown_outcome import CallOutcome, run_at_most_once
from reasoning_graphs.question import describe_call
from reasoning_graphs.state import CallDecision, ClearedCall
from reasoning_graphs.tools.execute import (
    TOOL_FAILED,
    ToolResult,
    execute_call,
    recorded_output,
)
from reasoning_graphs.tools.injection import tool_runtime
from reasoning_graphs.tools.output import content_text

CHANGED_CALL = (
    "Not run: a middleware changed this call to {call} after it was cleared; a call runs only "
    "as it was cleared, and one that needs a person only as the person decided."
)


RAN_ONCE = (
    "Not run again: a middleware asked for a second run of a call a person decided, which "
    "already ran; a person decides each run."
)


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
    # read once: a tool's ``when`` setting is the user's code, and its answer must not
    # change between the seal's check and the run
    name = call["name"]
    needs_person = run.policy.needs_approval(run.registry.get(name), name, call, state)
    refused = unapproved(call, needs_person)
    if refused is not None:
        return CallOutcome(ToolResult(refused, "error", 0.0), "blocked")
    if run.setup.tool_hooks:
        execute = hooked_call(run, call, observations, state, decided=needs_person)
    else:
        execute = _execute(run, call, call["args"], observations, state)
    return (yield from run_at_most_once(run, call, execute, needs_person))


def _execute(
    run: RunScope,
    call: ClearedCall,
    args: Mapping[str, Any],
    observations: Mapping[str, str],
    state: Mapping[str, Any] | None,
) -> Body[ToolResult]:
    """The tool of ``call`` run on ``args`` (the call's own, or those a hook handed on)."""
    return execute_call(
        run.registry,
        call["name"],
        args,
        call_id=call["id"],
        observations=observations,
        state=state,
    )


def hooked_call(
    run: RunScope,
    call: ClearedCall,
    observations: Mapping[str, str],
    state: Mapping[str, Any] | None,
    *,
    decided: bool,
) -> Body[ToolResult]:
    """``call`` run through the graph's ``wrap_tool_call`` middleware, first outermost.

    The hooks sit inside the approval boundary: they may retry, change the result or
    answer in the tool's place, but the tool runs only as the call was cleared. A hook
    that changes the call gets a refusal as the tool's answer, and nothing runs: any
    change to a call a person decides, or to the tool it names; a change of another
    call's arguments runs only when the tool's schema and the block rules take them.
    A tool that raises raises through the hooks, as under ``ToolNode`` (so a retry hook
    retries it); what still comes out of the chain becomes the observation as always.
    A call a person decided (``decided``) runs at most once to its end: a hook may try it
    again after it raised, never after it ran.
    """
    spec = run.registry.get(call["name"])
    made: list[tuple[ToolMessage, ToolResult]] = []
    failures: dict[int, ToolResult] = {}  # what the tool raised, as its observation
    started = time.perf_counter()

    def inner(asked: ToolCallRequest) -> Body[ToolMessage]:
        wanted = asked.tool_call
        refused = _changed_call(run, call, wanted["name"], wanted["args"])
        if refused is None and decided and made:  # a person decided one run, and it was made
            refused = RAN_ONCE
        if refused is not None:
            return ToolMessage(refused, tool_call_id=call["id"], name=call["name"], status="error")
        result = yield from _execute(run, call, wanted["args"], observations, state)
        if result.raised is not None:
            failures[id(result.raised)] = result
            raise result.raised
        message = result.to_message(call["id"], call["name"])
        made.append((message, result))
        return message

    tool_call = ToolCall(
        name=call["name"], args=dict(call["args"]), id=call["id"], type="tool_call"
    )
    request = ToolCallRequest(
        tool_call=tool_call,
        tool=spec.tool if spec else None,
        state=state,
        runtime=tool_runtime(get_runtime(), state, call["id"], run.registry.tools()),
    )
    try:
        answer = yield Chain(run.setup.tool_hooks, TOOL_HOOKS, request, inner)
    except (GraphBubbleUp, FaceNotWritten):  # a pause, or a graph that cannot run here
        raise
    except Exception as error:  # the tool's failure, or a hook's own, as an observation
        if id(error) in failures:
            return failures[id(error)]
        kind = type(error).__name__
        text = TOOL_FAILED.format(name=call["name"], kind=kind, message=str(error) or kind)
        return ToolResult(text, "error", (time.perf_counter() - started) * 1000)
    for message, result in made:
        if answer is message:  # the tool's own answer, as it was recorded
            return result
    if spec is None:
        return ToolResult(content_text(getattr(answer, "content", "")), "error", 0.0)
    elapsed = (time.perf_counter() - started) * 1000
    return recorded_output(answer, spec, call_id=call["id"], name=call["name"], duration_ms=elapsed)


def _changed_call(
    run: RunScope, call: ClearedCall, name: str, args: Mapping[str, Any]
) -> str | None:
    """Why the call a hook hands on may not run in place of the cleared ``call``; ``None``
    when it may (it is the same, or only another call's arguments changed acceptably)."""
    if name == call["name"] and args == call["args"]:
        return None
    shown = describe_call(name, args)
    if name != call["name"] or run.policy.needs_approval(run.registry.get(name), name):
        return CHANGED_CALL.format(call=shown)
    return run.policy.block_reason(name, args) or run.registry.call_error(name, args)
