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

from pydantic import BaseModel, ValidationError

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


async def execute_call(
    registry: ToolRegistry,
    name: str,
    args: Mapping[str, Any],
    *,
    call_id: str,
    observations: Mapping[str, str] | None = None,
) -> ToolResult:
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
    # A task plus asyncio.wait tells our timeout apart from a TimeoutError the tool raises.
    task = asyncio.ensure_future(spec.tool.ainvoke(call_args))
    done, _ = await asyncio.wait({task}, timeout=spec.timeout)
    if not done:
        task.cancel()
        return finish(TOOL_TIMED_OUT.format(name=name, seconds=spec.timeout), "error")
    try:
        output = task.result()
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
