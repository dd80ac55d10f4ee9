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

The checks are links of one chain around one request (:func:`checked_call`), the way
LangGraph's ``ToolNode`` runs ``wrap_tool_call`` hooks around a call: the graph's own
middleware joins the chain as links inside the approval boundary.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from langchain.agents.middleware import ToolCallRequest
from langchain_core.messages import ToolCall, ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import get_runtime
from typing_extensions import TypedDict

from reasoning_graphs.effects import Body, chained
from reasoning_graphs.middleware import TOOL_HOOKS, Chain, FaceNotWritten
from reasoning_graphs.nodes.model.setup import RunScope
from reasoning_graphs.nodes.steps.call_request import CallOutcome, CallRequest, Next
from reasoning_graphs.nodes.steps.seal import sealed_only
from reasoning_graphs.nodes.steps.unknown_outcome import at_most_once
from reasoning_graphs.question import describe_call
from reasoning_graphs.state import CallDecision, ClearedCall
from reasoning_graphs.tools.execute import (
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
    """Run a cleared call the way every runner does (``act``, and :func:`run_cleared`): one
    :class:`~.call_request.CallRequest` through one chain of links, first outermost.

    1. :func:`~.seal.sealed_only`: a call that needs a person runs only with a valid seal
       of their decision;
    2. :func:`~.unknown_outcome.at_most_once`: a call that must not simply repeat runs at
       most once across a crash;
    3. the graph's ``wrap_tool_call`` middleware, first outermost (:func:`through_middleware`),
       when it has any, then :func:`as_cleared`: a hook's change runs only when it may;
    4. :func:`execute`: the tool runs.
    """
    name = call["name"]
    request = CallRequest(
        run=run,
        call=call,
        name=name,
        args=call["args"],
        observations=observations,
        state=state,
        # read once: a tool's ``when`` setting is the user's code, and its answer must not
        # change between the seal's check and the run
        needs_person=run.policy.needs_approval(run.registry.get(name), name, call, state),
    )
    outcome = yield from _CHAINS[bool(run.setup.tool_hooks)](request)
    notice = call.get("notice")
    if notice and outcome.decision == "edited":  # the model reads what ran in its call's place
        return replace(outcome, result=outcome.result.with_notice(notice))
    return outcome


def execute(request: CallRequest) -> Body[CallOutcome]:
    """The chain's last step: the tool of the call run on the request's arguments."""
    call, registry = request.call, request.run.registry
    if request.tool is not None:  # a tool a hook brought (as_cleared let it): it runs as ours
        registry = registry.brought(request.tool)
    result = yield from execute_call(
        registry,
        call["name"],
        request.args,
        call_id=call["id"],
        observations=request.observations,
        state=request.state,
    )
    return CallOutcome(result, call["decision"])


def as_cleared(request: CallRequest, then: Next) -> Body[CallOutcome]:
    """The link behind the middleware: the call a hook hands on runs only as it was cleared.

    A hook may retry, change the result or answer in the tool's place, but any change to a
    call a person decides, or to the tool it names (another tool, or another tool object of
    the name), is answered with a refusal and nothing runs; a change of another call's
    arguments or tool object runs only when the tool's schema and the block rules take them.
    """
    call, run, name, args = request.call, request.run, request.name, request.args
    swapped = request.tool is not None and name in run.registry  # another tool of the name
    if name == call["name"] and args == call["args"] and not swapped:
        return (yield from then(request))
    refused: str | None
    # a tool that needs a person, or may by its ``when``, runs only the call they decided
    if name != call["name"] or run.policy.needs_approval(run.registry.get(name), name):
        refused = CHANGED_CALL.format(call=describe_call(name, args))
    else:
        refused = run.policy.block_reason(name, args) or run.registry.call_error(name, args)
    if refused is None:
        return (yield from then(request))
    return CallOutcome(ToolResult(refused, "error", 0.0), "blocked")


def through_middleware(request: CallRequest, then: Next) -> Body[CallOutcome]:
    """The graph's ``wrap_tool_call`` middleware as links of the chain, first outermost.

    They sit inside the approval boundary (after :func:`~.seal.sealed_only` and
    :func:`~.unknown_outcome.at_most_once`). A tool that raises raises through the hooks,
    as under ``ToolNode`` (so a retry hook retries it, an error hook answers for it); an
    error that comes out of the chain ends the run, as under ``create_agent``: the hooks
    had it and let it go (with no hooks, a tool's error is the model's observation). A
    call a person decided runs at most once to its end: a hook may try it again after it
    raised, never after it ran.
    """
    run, call = request.run, request.call
    spec = run.registry.get(call["name"])
    made: list[tuple[ToolMessage, CallOutcome]] = []
    started = time.perf_counter()

    def inner(asked: ToolCallRequest) -> Body[ToolMessage]:
        wanted = asked.tool_call
        if request.needs_person and made:  # a person decided one run, and it was made
            return ToolMessage(RAN_ONCE, tool_call_id=call["id"], name=call["name"], status="error")
        brought = asked.tool if spec is None or asked.tool is not spec.tool else None
        outcome = yield from then(request.handed_on(wanted["name"], wanted["args"], brought))
        if outcome.result.raised is not None:
            raise outcome.result.raised
        message = outcome.result.to_message(call["id"], call["name"])
        if outcome.decision != "blocked":  # the tool ran
            made.append((message, outcome))
        return message

    tool_call = ToolCall(
        name=call["name"], args=dict(call["args"]), id=call["id"], type="tool_call"
    )
    hook_request = ToolCallRequest(
        tool_call=tool_call,
        tool=spec.tool if spec else None,
        state=request.state,
        runtime=tool_runtime(get_runtime(), request.state, call["id"], run.registry.tools()),
    )
    try:
        answer = yield Chain(run.setup.tool_hooks, TOOL_HOOKS, hook_request, inner)
    except (GraphBubbleUp, FaceNotWritten):  # a pause, or a graph that cannot run here
        raise
    for message, outcome in made:
        if answer is message:  # the tool's own answer, as it was recorded
            return outcome
    if spec is None:  # a hook's answer for a tool the graph does not hold
        failed = getattr(answer, "status", "error") == "error"
        text = content_text(getattr(answer, "content", ""))
        result = ToolResult(text, "error" if failed else "success", 0.0)
    else:
        elapsed = (time.perf_counter() - started) * 1000
        result = recorded_output(
            answer, spec, call_id=call["id"], name=call["name"], duration_ms=elapsed
        )
    return CallOutcome(result, call["decision"])


_CHAINS: dict[bool, Next] = {
    False: chained((sealed_only, at_most_once), execute),
    True: chained((sealed_only, at_most_once, through_middleware, as_cleared), execute),
}
"""The chain of :func:`checked_call`, without and with the graph's ``wrap_tool_call`` hooks
(made once)."""
