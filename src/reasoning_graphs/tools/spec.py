"""Tool specs: a LangChain tool plus the facts the runtime needs to run it safely.

Users keep writing tools the way they already do (``@tool``, ``BaseTool``,
``StructuredTool`` or a plain typed function, sync or async); :func:`tool_spec`
wraps any of them and adds the execution fields: whether a person must approve
the call, whether it may run alongside other calls, whether it may simply run
again when a crash left a call's outcome unknown, a timeout and how long an
observation may be before it is cut. A timeout or length a spec leaves unset
takes the graph's default (:class:`ToolDefaults`), so most tools need no spec.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.tools.base import ArgsSchema
from pydantic import BaseModel, ValidationError

from reasoning_graphs.tools.injection import Injections, injections_of, runtime_parameters

DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_MAX_OBSERVATION_CHARS = 4000


class Unset(enum.Enum):
    """A spec field the tool's author did not set: the graph's default applies."""

    UNSET = "unset"


UNSET: Literal[Unset.UNSET] = Unset.UNSET


@dataclass(frozen=True)
class ToolDefaults:
    """The timeout and observation length of every tool whose spec does not set its own.

    Attributes:
        timeout: Seconds before a running call is abandoned (``None``: no limit).
        max_observation_chars: Longer results are cut, keeping head and tail.
    """

    timeout: float | None = DEFAULT_TIMEOUT_SECONDS
    max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS


@dataclass(frozen=True)
class ToolSpec:
    """A tool with its execution policy.

    Attributes:
        tool: The LangChain tool that validates arguments and does the work.
        dangerous: A person must approve each call before it runs.
        concurrency_safe: The tool only reads, so its calls may overlap with
            other calls of the same model turn.
        idempotent: Running a call twice does no more than running it once, so
            a call that started before a crash and has no saved result may run
            again on resume. ``None``: as ``concurrency_safe`` or ``pure`` says (a
            lookup may be repeated, anything else may not); see :attr:`retry_safe`.
        timeout: Seconds before a running call is abandoned (``None``: no limit;
            ``UNSET``: the graph's default).
        max_observation_chars: Longer results are cut, keeping head and tail;
            the full text stays retrievable by reference (``UNSET``: the
            graph's default).
        where: Where a call with these arguments acts, for the person asked to
            approve it: a file tool's absolute path, the shell's folder.
        upkeep: The tool only keeps the run's own records (a plan's ticks) and does
            none of the task's work, so the tool-call budgets (``max_tool_calls``,
            ``max_tool_calls_per_turn``) do not count its calls; a pattern's own tools
            only.
        pure: The tool is a pure function of its arguments (a calculator, a parser):
            the same arguments always give the same result, and a call changes
            nothing. Only then may an identical call of the same question be
            answered from the earlier result instead of running, marked as such.
            Off by default and never inferred: a read-only tool still sees a world
            that changes without us (a build's status, a clock, an inbox), so its
            every call runs. A pure tool is read-only and retry-safe too.
    """

    tool: BaseTool
    dangerous: bool = False
    concurrency_safe: bool = False
    idempotent: bool | None = None
    timeout: float | Unset | None = UNSET
    max_observation_chars: int | Unset = UNSET
    where: Callable[[Mapping[str, Any]], str] | None = None
    upkeep: bool = False
    pure: bool = False

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def description(self) -> str:
        return self.tool.description

    @property
    def retry_safe(self) -> bool:
        """Whether a call whose outcome a crash made unknown may simply run again."""
        if self.idempotent is not None:
            return self.idempotent
        return self.concurrency_safe or self.pure

    @property
    def read_only(self) -> bool:
        """Whether calls only read, so they may overlap with other calls of a turn."""
        return self.concurrency_safe or self.pure

    def with_defaults(self, defaults: ToolDefaults) -> ToolSpec:
        """This spec with every unset field taken from ``defaults``."""
        changes: dict[str, Any] = {}
        if self.timeout is UNSET:
            changes["timeout"] = defaults.timeout
        if self.max_observation_chars is UNSET:
            changes["max_observation_chars"] = defaults.max_observation_chars
        return replace(self, **changes) if changes else self

    def argument_schema(self) -> dict[str, Any]:
        """JSON schema of the arguments the model must supply (injected ones excluded)."""
        return _json_schema(self.tool.tool_call_schema)

    def argument_problems(self, args: Mapping[str, Any]) -> str | None:
        """What in ``args`` is off the tool's schema, in one line; ``None`` when they fit."""
        if not isinstance(args, Mapping):
            return f"expected an object of named arguments, got {type(args).__name__}"
        schema = self.tool.tool_call_schema
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

    def injected_arguments(self) -> set[str]:
        """Arguments the runtime fills in, hidden from the model (``InjectedToolArg``)."""
        return set(self._hidden_arguments)

    @cached_property
    def injections(self) -> Injections:
        """What the runtime must fill in for this tool (state, store, runtime, observations)."""
        return injections_of(self.tool, self._hidden_arguments)

    @cached_property
    def _hidden_arguments(self) -> frozenset[str]:
        schema = self.tool.get_input_schema()
        fields = getattr(schema, "model_fields", None)
        if fields is None:
            fields = _json_schema(schema).get("properties", {})
        visible = set(self.argument_schema().get("properties", {}))
        # a ToolRuntime the function asks for beside an args_schema that leaves it out
        return frozenset((set(fields) - visible) | runtime_parameters(self.tool))


def _json_schema(schema: ArgsSchema) -> dict[str, Any]:
    """A tool's arguments as JSON schema, from a dict or a pydantic model (v2, or v1, which
    LangChain still accepts)."""
    if isinstance(schema, dict):
        return schema
    if issubclass(schema, BaseModel):
        return schema.model_json_schema()
    return schema.schema()


def tool_spec(
    obj: BaseTool | Callable[..., Any] | ToolSpec,
    *,
    name: str | None = None,
    description: str | None = None,
    dangerous: bool | None = None,
    concurrency_safe: bool | None = None,
    idempotent: bool | None = None,
    timeout: float | Unset | object | None = ...,
    max_observation_chars: int | Unset | None = None,
    where: Callable[[Mapping[str, Any]], str] | None = None,
    pure: bool | None = None,
) -> ToolSpec:
    """Wrap a LangChain tool or a typed function as a :class:`ToolSpec`.

    Fields left out keep the value already on a ``ToolSpec``; a timeout or
    length never set takes the graph's default when the graph is built
    (``timeout=None`` is set: it means no limit).

    Examples:
        >>> def add(a: int, b: int) -> int:
        ...     '''Add two integers. Not for floating-point maths.'''
        ...     return a + b
        >>> spec = tool_spec(add, concurrency_safe=True)
        >>> spec.name, spec.concurrency_safe, spec.retry_safe
        ('add', True, True)
    """
    if isinstance(obj, ToolSpec):
        spec = obj
    elif isinstance(obj, BaseTool):
        spec = ToolSpec(tool=obj)
    elif callable(obj):
        spec = ToolSpec(tool=_function_tool(obj, name, description))
    else:
        raise TypeError(f"Cannot make a tool from {type(obj).__name__}: pass a tool or a function.")
    changes: dict[str, Any] = {}
    if name is not None and name != spec.name:
        changes["tool"] = spec.tool.model_copy(update={"name": name})
    if description is not None and description != spec.description:
        tool = changes.get("tool", spec.tool)
        changes["tool"] = tool.model_copy(update={"description": description})
    if dangerous is not None:
        changes["dangerous"] = dangerous
    if concurrency_safe is not None:
        changes["concurrency_safe"] = concurrency_safe
    if idempotent is not None:
        changes["idempotent"] = idempotent
    if timeout is not ...:
        changes["timeout"] = timeout
    if max_observation_chars is not None:
        changes["max_observation_chars"] = max_observation_chars
    if where is not None:
        changes["where"] = where
    if pure is not None:
        changes["pure"] = pure
    return replace(spec, **changes) if changes else spec


def _function_tool(func: Callable[..., Any], name: str | None, description: str | None) -> BaseTool:
    if not (func.__doc__ or description):
        raise ValueError(
            f"Tool function {getattr(func, '__name__', func)!r} needs a docstring or a "
            "description: the model chooses tools by it."
        )
    if inspect.iscoroutinefunction(func):
        return StructuredTool.from_function(
            coroutine=func, name=name, description=description, parse_docstring=False
        )
    return StructuredTool.from_function(
        func=func, name=name, description=description, parse_docstring=False
    )
