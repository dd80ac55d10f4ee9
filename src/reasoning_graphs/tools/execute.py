"""Run one tool call and turn whatever happens into an observation.

The model must be able to act on every outcome, so nothing here raises for a
bad call: an unknown tool, invalid arguments, an exception inside the tool and a
timeout each come back as an error observation that says what to do instead.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, ValidationError

from reasoning_graphs.effects import Abandoned, Await, Body, Bounded, Effect, in_daemon_thread
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import ToolSpec

UNKNOWN_TOOL = "Error: there is no tool named {name!r}. Available tools: {available}."
INVALID_ARGUMENTS = (
    "Error: invalid arguments for {name!r}: {problems}. "
    "Call it again with arguments matching this schema: {schema}"
)
TOOL_FAILED = "Error: {name!r} failed with {kind}: {message}"
TOOL_TIMED_OUT = (
    "Error: {name!r} did not finish within {seconds:g} s and was abandoned. "
    "Try a smaller request or another approach."
)
CUT_MARKER = (
    "\n[... {cut} characters cut; the full text is available with "
    "read_observation(ref={ref!r}) ...]\n"
)

OBSERVATIONS_ARGUMENT = "observations"
"""Injected argument through which a tool may read earlier full-length observations."""


@dataclass(frozen=True)
class ToolResult:
    """What one call produced, as the model will see it."""

    content: str
    status: Literal["success", "error"]
    duration_ms: float
    ref: str | None = None
    full_text: str | None = None


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
) -> Body[ToolResult]:
    """Run ``name(**args)`` and return its (possibly cut) observation."""
    started = time.perf_counter()

    def finish(content: str, status: Literal["success", "error"]) -> ToolResult:
        elapsed = (time.perf_counter() - started) * 1000
        return ToolResult(content=content, status=status, duration_ms=elapsed)

    spec = registry.get(name)
    if spec is None:
        return finish(
            UNKNOWN_TOOL.format(name=name, available=", ".join(registry.names())), "error"
        )
    problems = _argument_problems(spec, args)
    if problems:
        message = INVALID_ARGUMENTS.format(
            name=name, problems=problems, schema=json.dumps(spec.argument_schema())
        )
        return finish(message, "error")
    call_args = dict(args)
    if OBSERVATIONS_ARGUMENT in spec.injected_arguments():
        call_args[OBSERVATIONS_ARGUMENT] = dict(observations or {})
    try:
        output = yield Bounded(ToolRun(spec.tool, call_args), spec.timeout)
    except Abandoned:
        return finish(TOOL_TIMED_OUT.format(name=name, seconds=spec.timeout), "error")
    except Exception as exc:  # every failure becomes an observation
        kind = type(exc).__name__
        return finish(TOOL_FAILED.format(name=name, kind=kind, message=str(exc) or kind), "error")
    result = finish(_as_text(output), "success")
    return _cut(result, spec, observation_ref(call_id))


def _argument_problems(spec: ToolSpec, args: Mapping[str, Any]) -> str | None:
    if not isinstance(args, Mapping):
        return f"expected an object of named arguments, got {type(args).__name__}"
    schema = spec.tool.tool_call_schema
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return None
    try:
        schema.model_validate(dict(args))
    except ValidationError as exc:
        return "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}"
            for err in exc.errors()
        )
    return None


def _as_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if hasattr(output, "content") and isinstance(output.content, str):
        return output.content
    try:
        return json.dumps(output, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(output)


def _cut(result: ToolResult, spec: ToolSpec, ref: str) -> ToolResult:
    """Keep head and tail of a long observation; remember the full text under ``ref``."""
    limit = spec.max_observation_chars
    text = result.content
    if len(text) <= limit:
        return result
    marker = CUT_MARKER.format(cut=len(text), ref=ref)  # the widest the count can be
    keep = max(limit - len(marker), 2)
    head, tail = keep * 2 // 3, keep - keep * 2 // 3
    cut = len(text) - head - tail
    content = text[:head] + CUT_MARKER.format(cut=cut, ref=ref) + text[len(text) - tail :]
    return ToolResult(
        content=content,
        status=result.status,
        duration_ms=result.duration_ms,
        ref=ref,
        full_text=text,
    )
