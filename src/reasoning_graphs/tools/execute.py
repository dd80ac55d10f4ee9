"""Run one tool call and turn whatever happens into an observation.

The model must be able to act on every outcome, so nothing here raises for a
bad call: an exception inside the tool and a timeout each come back as an error
observation that says what to do instead. Whether a call can run at all (its
tool exists, its arguments fit the tool's schema:
:meth:`~reasoning_graphs.tools.registry.ToolRegistry.call_error`) is decided
once, where the call is triaged, before a person is asked and before it runs;
the call that reaches :func:`execute_call` is the cleared one, taken as it is.
Otherwise the tool answers as it would under LangGraph's ``ToolNode``: invoked
with the whole tool call, it keeps its own status, artifact, content blocks and
commands (see :mod:`reasoning_graphs.tools.output`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.messages.tool import ToolCall
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.errors import GraphBubbleUp

from reasoning_graphs.effects import Abandoned, Await, Body, Bounded, Effect, in_daemon_thread
from reasoning_graphs.errors import is_transient_failure
from reasoning_graphs.metadata import TRANSIENT, reused_from
from reasoning_graphs.tools.injection import OBSERVATIONS_ARGUMENT, InjectionError, injected_values
from reasoning_graphs.tools.output import (
    CUT_MARKER,
    Status,
    ToolCommand,
    ToolOutputError,
    ToolResult,
    content_text,
    cut_long,
    read_output,
    with_cut_text,
)
from reasoning_graphs.tools.registry import UNKNOWN_TOOL, ToolRegistry
from reasoning_graphs.tools.spec import ToolSpec

logger = logging.getLogger(__name__)


TOOL_FAILED = "Error: {name!r} failed with {kind}: {message}"
CANNOT_USE = "Error: {problem}"
TOOL_TIMED_OUT = (
    "Error: {name!r} did not finish within {seconds:g} s and was abandoned. "
    "Try a smaller request or another approach."
)

__all__ = [
    "CUT_MARKER",
    "OBSERVATIONS_ARGUMENT",
    "ToolCommand",
    "ToolResult",
    "ToolRun",
    "cut_message",
    "execute_call",
    "observation_ref",
    "recorded_output",
]


def observation_ref(call_id: str) -> str:
    """The reference id under which a cut observation's full text is kept."""
    return f"obs-{call_id}"


class ToolRun(Effect):
    """One tool invocation with the face's own method.

    A tool written only as a coroutine still runs on the sync face (on the
    long-lived private loop of :class:`~reasoning_graphs.effects.Await`); a tool
    written only as a function runs on a daemon thread on the async face, so a
    call abandoned after its timeout holds up neither the loop nor the exit.
    """

    def __init__(self, tool: BaseTool, value: Any):
        self.tool, self.value = tool, value

    def run(self) -> Any:
        if _async_only(self.tool):
            return Await(lambda: self.tool.ainvoke(self.value)).run()
        return self.tool.invoke(self.value)

    async def arun(self) -> Any:
        if _sync_only(self.tool):
            return await asyncio.wrap_future(in_daemon_thread(lambda: self.tool.invoke(self.value)))
        return await self.tool.ainvoke(self.value)


def _async_only(tool: BaseTool) -> bool:
    return isinstance(tool, StructuredTool) and tool.func is None and tool.coroutine is not None


def _sync_only(tool: BaseTool) -> bool:
    if isinstance(tool, StructuredTool):
        return tool.coroutine is None
    return type(tool)._arun is BaseTool._arun


def execute_call(
    registry: ToolRegistry,
    name: str,
    args: Mapping[str, Any],
    *,
    call_id: str,
    observations: Mapping[str, str] | None = None,
    state: Mapping[str, Any] | None = None,
) -> Body[ToolResult]:
    """Run ``name(**args)`` as the tool call ``call_id`` and return its (possibly cut) observation.

    The tool is invoked with the whole tool call, as LangGraph's ``ToolNode``
    does, so it answers with a ``ToolMessage`` (its own status, artifact and
    content blocks) or a ``Command``. ``state`` is the graph state for tools
    that inject it (``InjectedState``, ``ToolRuntime``); ``observations`` the
    stored full texts for ``read_observation``. The call was cleared by the triage, which
    checked its arguments (``ToolRegistry.call_error``); they are not checked again here.
    """
    started = time.perf_counter()

    def failed(content: str) -> ToolResult:
        elapsed = (time.perf_counter() - started) * 1000
        return ToolResult(content=content, status="error", duration_ms=elapsed)

    spec = registry.get(name)
    if spec is None:  # a call no triage cleared, written into the state by hand
        return failed(UNKNOWN_TOOL.format(name=name, available=", ".join(registry.names())))
    try:
        extra = injected_values(
            spec.tool,
            spec.injections,
            call_id=call_id,
            state=state,
            observations=observations,
            tools=registry.tools(),
        )
        call = ToolCall(name=name, args={**args, **extra}, id=call_id, type="tool_call")
        output = yield from _invoke(spec, call, retry=registry.is_read_only(name))
        message, command = read_output(output, call_id=call_id, name=name)
    except GraphBubbleUp:  # an interrupt inside the tool: LangGraph pauses the run
        raise
    except Abandoned:
        return failed(TOOL_TIMED_OUT.format(name=name, seconds=spec.timeout))
    except (InjectionError, ToolOutputError) as exc:
        return failed(CANNOT_USE.format(problem=exc))
    except Exception as exc:  # every failure becomes an observation
        kind = type(exc).__name__
        result = failed(TOOL_FAILED.format(name=name, kind=kind, message=str(exc) or kind))
        result = replace(result, raised=exc)
        return _as_transient(result, call_id, name) if is_transient_failure(exc) else result
    elapsed = (time.perf_counter() - started) * 1000
    return _recorded(message, command, spec, observation_ref(call_id), elapsed)


def _invoke(spec: ToolSpec, call: ToolCall, *, retry: bool) -> Body[Any]:
    """The tool's answer to ``call``; a transient failure is tried once more when ``retry``.

    Only read-only (concurrency-safe) tools are retried: a stateful call that
    timed out may have done its work, and running it blindly again could do it
    twice. A call abandoned at its own timeout is not retried either — it had
    its whole time, and its worker may still be running.
    """
    try:
        return (yield Bounded(ToolRun(spec.tool, call), _seconds(spec.timeout)))
    except Exception as exc:
        if not (retry and is_transient_failure(exc)):
            raise
        logger.info("%s failed in a way that may pass (%s); trying once more", spec.name, exc)
    return (yield Bounded(ToolRun(spec.tool, call), _seconds(spec.timeout)))


def _as_transient(result: ToolResult, call_id: str, name: str) -> ToolResult:
    """``result`` marked as a failure that may pass, on its message too, so every
    pattern that records the message keeps the mark (and never reuses the error)."""
    message = ToolMessage(
        result.content,
        tool_call_id=call_id,
        name=name,
        status="error",
        response_metadata={TRANSIENT: True},
    )
    return replace(result, message=message, transient=True)


def recorded_output(
    output: Any, spec: ToolSpec, *, call_id: str, name: str, duration_ms: float
) -> ToolResult:
    """What a tool call produced (a tool's answer, or a middleware's in its place), recorded
    as every result is (see :func:`_recorded`)."""
    message, command = read_output(output, call_id=call_id, name=name)
    return _recorded(message, command, spec, observation_ref(call_id), duration_ms)


def _recorded(
    message: ToolMessage,
    command: ToolCommand | None,
    spec: ToolSpec,
    ref: str,
    duration_ms: float,
) -> ToolResult:
    """The result as recorded: the tool's message as it came, and its text for trajectories,
    cut when too long (the full text is kept under ``ref`` for ``read_observation``; the
    model reads the message cut the same way, see :func:`cut_message`)."""
    text = content_text(message.content)
    status: Status = "error" if message.status == "error" else "success"
    ends_turn = spec.tool.return_direct or (command is not None and command.ends_turn)
    limit = spec.max_observation_chars
    cut = cut_long(text, limit, ref) if isinstance(limit, int) else None
    return ToolResult(
        text if cut is None else cut,
        status,
        duration_ms,
        ref=None if cut is None else ref,
        full_text=None if cut is None else text,
        message=message,
        command=command,
        return_direct=ends_turn,
    )


def cut_message(
    message: ToolMessage, registry: ToolRegistry, tool: str | None = None
) -> ToolMessage:
    """``message`` as the model reads it: its text cut around a pointer to
    ``read_observation`` when longer than its tool's ``max_observation_chars``
    (``tool``: the tool's name, when the message may not carry it).

    The conversation keeps what the tool returned; only prompts read the cut copy.
    A repeat answered from an earlier call points at that call's full text.
    """
    spec = registry.get(tool or message.name or "")
    limit = spec.max_observation_chars if spec is not None else None
    if not isinstance(limit, int):
        return message
    if isinstance(message.content, str) and len(message.content) <= limit:
        return message  # the common case, without reading the text again
    ref = observation_ref(reused_from(message) or message.tool_call_id)
    cut = cut_long(content_text(message.content), limit, ref)
    if cut is None:
        return message
    return message.model_copy(update={"content": with_cut_text(message.content, cut)})


def _seconds(timeout: float | object | None) -> float | None:
    return timeout if isinstance(timeout, (int, float)) else None
