"""Arguments the runtime fills in for a tool, as LangGraph's ``ToolNode`` fills them.

LangChain tools may ask for values the model never sees: the graph state
(``InjectedState``, whole or one key), the store (``InjectedStore``), a
``ToolRuntime`` (state, context, store, config, call id, tools), the call id
(``InjectedToolCallId``, filled by langchain-core itself from the tool call)
and, for our own ``read_observation``, the stored full observations.

``ToolNode`` keeps its injection private and runs calls on a pooled thread
the process waits for at exit, which would undo our abandoned-timeout
guarantee; so the runtime reads the same public markers here and passes the
values in the tool call it invokes.
"""

from __future__ import annotations

import contextlib
import functools
import typing
from collections.abc import Callable, Collection, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from langgraph.config import get_config
from langgraph.prebuilt import InjectedState, InjectedStore, ToolRuntime
from langgraph.runtime import get_runtime

from reasoning_graphs.private_names import CONF, CONFIG_KEY_READ

OBSERVATIONS_ARGUMENT = "observations"
"""Injected argument through which a tool may read earlier full-length observations."""

NO_STATE = "{name!r} needs the graph state (argument {argument!r}), but it was called without one."
MISSING_STATE_KEY = (
    "{name!r} needs the state key {key!r} (argument {argument!r}), which is not set."
)
NO_STORE = (
    "{name!r} needs a store (argument {argument!r}): compile or run the graph with a store "
    "(e.g. graph.store = InMemoryStore(); langgraph dev brings one)."
)
OUTSIDE_GRAPH = (
    "{name!r} needs the graph's runtime (argument {argument!r}) but ran outside a graph."
)


class InjectionError(ValueError):
    """A value a tool asks for is not available where it was called."""


@dataclass(frozen=True)
class Injections:
    """What one tool asks the runtime to fill in.

    Attributes:
        state: Argument → state key it receives (``None``: the whole state).
        optional_state: Arguments of ``state`` that have a default, so a
            missing key leaves them out instead of failing.
        store: The argument that receives the store, if any.
        runtime: The argument that receives a ``ToolRuntime``, if any.
        observations: The tool reads stored full observations.
    """

    state: Mapping[str, str | None]
    optional_state: frozenset[str]
    store: str | None
    runtime: str | None
    observations: bool

    @property
    def needs_state(self) -> bool:
        """The caller must hand over the graph state for this tool's calls."""
        return bool(self.state) or self.runtime is not None


def injections_of(tool: BaseTool, hidden: Set[str]) -> Injections:
    """Read what ``tool`` asks for from its annotations; ``hidden`` are its injected arguments."""
    state: dict[str, str | None] = {}
    optional: set[str] = set()
    store = runtime = None
    schema = tool.get_input_schema()
    fields = getattr(schema, "model_fields", {})
    runtimes = runtime_parameters(tool)  # a schema may declare the parameter as Any
    for name, hint in _annotations(tool, schema).items():
        if name not in hidden:
            continue
        if name in runtimes or _is_runtime(hint):
            runtime = name
        elif marker := _marker(hint, InjectedState):
            state[name] = marker.field if isinstance(marker, InjectedState) else None
            if name in fields and not fields[name].is_required():
                optional.add(name)
        elif _marker(hint, InjectedStore):
            store = name
    return Injections(
        state=state,
        optional_state=frozenset(optional),
        store=store,
        runtime=runtime,
        observations=OBSERVATIONS_ARGUMENT in hidden and OBSERVATIONS_ARGUMENT not in state,
    )


def runtime_parameters(tool: BaseTool) -> set[str]:
    """The tool function's parameters that take a ``ToolRuntime``, as ``ToolNode`` finds
    them: from its signature, even where an explicit ``args_schema`` leaves them out."""
    func = (tool.func or tool.coroutine) if isinstance(tool, StructuredTool) else None
    return set() if func is None else set(_runtime_parameters_of(func))


@functools.cache
def _runtime_parameters_of(func: Callable[..., Any]) -> frozenset[str]:
    """:func:`runtime_parameters` of one function, read once (a tool's spec is made anew for
    each run, and reading type hints is not cheap)."""
    with contextlib.suppress(NameError, TypeError):
        hints = typing.get_type_hints(func, include_extras=True)
        return frozenset(n for n, hint in hints.items() if n != "return" and _is_runtime(hint))
    return frozenset()


def injected_values(
    tool: BaseTool,
    injections: Injections,
    *,
    call_id: str,
    state: Mapping[str, Any] | None,
    observations: Mapping[str, str] | None,
    tools: Sequence[BaseTool],
) -> dict[str, Any]:
    """The values to add to the model's arguments; raises :class:`InjectionError`."""
    values: dict[str, Any] = {}
    if injections.observations:
        values[OBSERVATIONS_ARGUMENT] = dict(observations or {})
    for argument, key in injections.state.items():
        if state is None:
            raise InjectionError(NO_STATE.format(name=tool.name, argument=argument))
        if key is None:
            values[argument] = state
        elif key in state:
            values[argument] = state[key]
        elif argument not in injections.optional_state:
            raise InjectionError(
                MISSING_STATE_KEY.format(name=tool.name, key=key, argument=argument)
            )
    if injections.store is not None:
        store = _runtime(tool, injections.store).store
        if store is None:
            raise InjectionError(NO_STORE.format(name=tool.name, argument=injections.store))
        values[injections.store] = store
    if injections.runtime is not None:
        if state is None:
            raise InjectionError(NO_STATE.format(name=tool.name, argument=injections.runtime))
        runtime = _runtime(tool, injections.runtime)
        values[injections.runtime] = tool_runtime(runtime, state, call_id, tools)
    return values


def task_state(keys: Collection[str]) -> dict[str, Any] | None:
    """The state's ``keys`` as the running task sees them (its own writes aside), or ``None``
    where LangGraph gives no read. A tool that injects the state reads it here when it runs,
    as LangGraph's ``ToolNode`` does, rather than from its task's input: that input is saved
    with the step, so a value the state never saves (a shell session) could not travel in it,
    and a long conversation would be saved again with every call."""
    read = get_config().get(CONF, {}).get(CONFIG_KEY_READ)
    if read is None:
        return None
    values = read(list(keys), False)
    return dict(values) if isinstance(values, Mapping) else None


def tool_runtime(
    runtime: Any, state: Any, call_id: str, tools: Sequence[BaseTool]
) -> ToolRuntime[Any, Any]:
    """What a call sees of its run as LangChain's ``ToolRuntime``: the state, the run's
    context, config, stream writer and store, its call id and the tools."""
    return ToolRuntime(
        state=state,
        context=runtime.context,
        config=get_config(),
        stream_writer=runtime.stream_writer,
        tool_call_id=call_id,
        store=runtime.store,
        tools=list(tools),
        execution_info=getattr(runtime, "execution_info", None),
        server_info=getattr(runtime, "server_info", None),
    )


def _runtime(tool: BaseTool, argument: str) -> Any:
    try:
        runtime = get_runtime()
    except (RuntimeError, KeyError) as exc:
        raise InjectionError(OUTSIDE_GRAPH.format(name=tool.name, argument=argument)) from exc
    if runtime is None:
        raise InjectionError(OUTSIDE_GRAPH.format(name=tool.name, argument=argument))
    return runtime


def _annotations(tool: BaseTool, schema: Any) -> dict[str, Any]:
    """Each argument's annotation, with ``Annotated`` extras: the schema's, else the function's."""
    found: dict[str, Any] = {}
    func = (tool.func or tool.coroutine) if isinstance(tool, StructuredTool) else None
    if func is not None:
        # unresolvable forward references: the schema below still tells
        with contextlib.suppress(NameError, TypeError):
            found.update(typing.get_type_hints(func, include_extras=True))
    for name, field in getattr(schema, "model_fields", {}).items():
        extras = tuple(field.metadata)
        found[name] = typing.Annotated[(field.annotation, *extras)] if extras else field.annotation
    return found


def _marker(hint: Any, kind: type) -> Any:
    """The ``kind`` marker (class or instance) in ``hint``'s ``Annotated`` extras or union."""
    if isinstance(hint, kind) or _is_subclass(hint, kind):
        return hint
    for inner in typing.get_args(hint):
        if found := _marker(inner, kind):
            return found
    return None


def _is_runtime(hint: Any) -> bool:
    if _is_subclass(typing.get_origin(hint) or hint, ToolRuntime):
        return True
    return any(_is_runtime(inner) for inner in typing.get_args(hint) if inner is not type(None))


def _is_subclass(hint: Any, kind: type) -> bool:
    try:
        return isinstance(hint, type) and issubclass(hint, kind)
    except TypeError:  # a parametrised generic passes for a type on older Pythons
        return False
