"""LangChain agent middleware around our calls: a hook chain, run by either face.

A user's ``AgentMiddleware`` wraps a model call with ``wrap_model_call`` (async:
``awrap_model_call``) and a tool call with ``wrap_tool_call`` (``awrap_tool_call``),
as under ``create_agent``: each hook gets the request and a handler that runs the
rest of the chain, the first middleware outermost, and may change the request,
call the handler more than once (retry, fallback) or answer without calling it.
Here the innermost handler runs one of our bodies (a guarded model call, a tool
run) to its end, with the face's own driver: the sync face calls the sync hooks,
the async face the async ones, as ``create_agent`` does: a middleware that only
wrote the other kind is refused on that face with :class:`FaceNotWritten`, before any
hook runs.

Examples:
    >>> from reasoning_graphs.effects import drive
    >>> class Doubled:
    ...     def wrap_model_call(self, request, handler):
    ...         return handler(request) * 2
    >>> def inner(request):
    ...     return request + 1
    ...     yield  # a body: it may yield effects
    >>> def body():
    ...     return (yield Chain([Doubled()], MODEL_HOOKS, 20, inner))
    >>> drive(body())
    42
"""

from __future__ import annotations

import types
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast, get_type_hints

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ModelRequest,
    ModelResponse,
    ToolCallLimitMiddleware,
)
from langchain.agents.middleware.types import OmitFromSchema
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
)
from langchain_core.tools import BaseTool
from langgraph.runtime import get_runtime
from langgraph.types import Command

from reasoning_graphs.effects import Body, Effect, adrive, drive
from reasoning_graphs.private_names import trace_policy_of


@dataclass(frozen=True)
class Hooks:
    """The names of one hook's sync and async methods."""

    sync: str
    async_: str

    @property
    def names(self) -> tuple[str, str]:
        return self.sync, self.async_


NOT_WRITTEN = (
    "The middleware {name!r} writes {written} but not {missing}, which the {face} face "
    "({calls}) calls: write both, or run the graph on the other face."
)


class FaceNotWritten(NotImplementedError):
    """A middleware lacks the hook this face calls (``awrap_*`` on ``ainvoke``/``astream``)."""


STATE_ELSEWHERE = (
    "The middleware {name!r} keeps state of its own ({fields}) and writes it from its "
    "before_model or after_model hooks, which save what they write around the model turns "
    "of a conversation loop: in the patterns react, react_text, plan_react, plan_execute "
    "(each step's loop) and reflexion (each trial). {pattern} makes its model calls from its "
    "own plans and boards, so that state would never be kept; its own options do the common "
    "jobs (max_model_calls=, max_tool_calls=)."
)
JUMPS = (
    "The middleware {name!r} may jump to {targets} from {hook}; reasoning-graphs honours "
    "a jump to 'end' (the question ends, incomplete, with the hook's words; from after_agent "
    "the hooks after it are skipped)."
)
CLASH = (
    "The state class {name!r} (a middleware's state_schema, or the graph's) adds the state "
    "field {field!r}, which the pattern's state already has (or another class adds with another "
    "type): rename it."
)
LANGCHAIN_FIELDS = frozenset(AgentState.__annotations__)
"""Fields of LangChain's agent state a middleware's ``state_schema`` repeats, not adds."""


def check_distinct(middleware: Sequence[Any]) -> None:
    """Refuse, when the graph is built, two middleware of one name, as ``create_agent``
    does: they would share their state fields."""
    names = [name_of(m) for m in middleware]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValueError(SAME_NAME.format(names=", ".join(map(repr, twice))))


def check_runnable(middleware: Sequence[Any]) -> None:
    """Refuse, when the graph is built, a middleware that may jump where no pattern has a
    place to go: only a jump to the end is honoured."""
    for m in middleware:
        for hook in (*BEFORE_MODEL.names, *AFTER_MODEL.names, *AGENT_HOOKS):
            targets = set(getattr(getattr(m, hook, None), "__can_jump_to__", ()) or ()) - {"end"}
            if _writes(m, hook) and targets:
                raise ValueError(JUMPS.format(name=name_of(m), targets=sorted(targets), hook=hook))


SAME_NAME = (
    "Two middleware are named {names}: give each its own name (its `name` property), or "
    "pass one instance."
)
READ_AS_SETTINGS = (HumanInTheLoopMiddleware, ModelCallLimitMiddleware, ToolCallLimitMiddleware)
"""Middleware read, when a graph is built, as settings every pattern keeps, not run as
hooks: approval settings (:mod:`~reasoning_graphs.tools.asking`) and call limits
(:mod:`~reasoning_graphs.nodes.guards.call_limits`)."""


def check_turns_run(middleware: Sequence[Any], pattern: str) -> None:
    """Refuse, for a pattern with no model turns, a middleware with state of its own that
    its ``before_model``/``after_model`` hooks write: they run on each call's prompt there,
    and what they write is not kept (what ``before_agent``/``after_agent`` write is). The
    middleware of :data:`READ_AS_SETTINGS` are read as settings of ours instead."""
    model_hooks = (*BEFORE_MODEL.names, *AFTER_MODEL.names)
    for m in middleware:
        fields = _own_state(m)
        writes = any(_writes(m, hook) for hook in model_hooks)
        if fields and writes and not isinstance(m, READ_AS_SETTINGS):
            raise ValueError(
                STATE_ELSEWHERE.format(name=name_of(m), fields=", ".join(fields), pattern=pattern)
            )


def added_schemas(middleware: Sequence[Any], state_schema: type | None = None) -> list[type]:
    """The state classes whose fields join a pattern's: each middleware's ``state_schema``
    and the user's own, in ``create_agent``'s order (the user's last)."""
    owned = [getattr(m, "state_schema", None) for m in middleware]
    return [schema for schema in (*owned, state_schema) if schema is not None]


def with_added_state(schema: type, added: Sequence[type], omit: str | None = None) -> type:
    """``schema`` with the fields the ``added`` classes declare (LangChain's own agent fields
    aside), as ``create_agent`` merges them; ``schema`` itself when none add any. ``omit``
    (``"input"``): leave out the fields marked ``OmitFromInput``, as an input schema does.

    Raises:
        ValueError: A field the state already has.
    """
    known = set(get_type_hints(schema, include_extras=True))
    fields: dict[str, Any] = {}
    for own in added:
        for field, kind in get_type_hints(own, include_extras=True).items():
            if field in LANGCHAIN_FIELDS or fields.get(field) == kind:
                continue  # LangChain's own, or one two classes share, as create_agent merges
            if field in known or field in fields:
                raise ValueError(CLASH.format(name=own.__name__, field=field))
            fields[field] = kind
    if omit is not None:
        fields = {field: kind for field, kind in fields.items() if not _omitted(kind, omit)}
    if not fields:
        return schema

    def body(namespace: dict[str, Any]) -> None:
        namespace.update({"__annotations__": fields, "__module__": schema.__module__})

    return types.new_class(f"{schema.__name__}WithMiddleware", (schema,), {}, body)


def _omitted(kind: Any, face: str) -> bool:
    """Whether a field's type is marked to be left out of the ``face`` schema."""
    return any(
        isinstance(meta, OmitFromSchema) and getattr(meta, face, False)
        for meta in getattr(kind, "__metadata__", ())
    )


def _own_state(middleware: Any) -> list[str]:
    """The state fields a middleware adds to LangChain's agent state."""
    own = getattr(middleware, "state_schema", None)
    return sorted(set(get_type_hints(own) if own is not None else ()) - LANGCHAIN_FIELDS)


def name_of(middleware: Any) -> str:
    """A middleware's name, as LangChain gives it (its class's, unless it says otherwise)."""
    return str(getattr(middleware, "name", type(middleware).__name__))


def _writes(middleware: Any, hook: str) -> bool:
    return getattr(type(middleware), hook, None) is not getattr(AgentMiddleware, hook)


MODEL_HOOKS = Hooks("wrap_model_call", "awrap_model_call")
TOOL_HOOKS = Hooks("wrap_tool_call", "awrap_tool_call")
BEFORE_MODEL = Hooks("before_model", "abefore_model")
AFTER_MODEL = Hooks("after_model", "aafter_model")
BEFORE_AGENT = Hooks("before_agent", "abefore_agent")
AFTER_AGENT = Hooks("after_agent", "aafter_agent")
AGENT_HOOKS = (*BEFORE_AGENT.names, *AFTER_AGENT.names)


def hooked(middleware: Sequence[AgentMiddleware], hooks: Hooks) -> tuple[AgentMiddleware, ...]:
    """The middleware that writes either method of ``hooks``, in order (as ``create_agent``
    chooses them)."""
    return tuple(m for m in middleware if _writes(m, hooks.sync) or _writes(m, hooks.async_))


class Chain(Effect):
    """``request`` passed through the middleware's ``hooks``, first middleware outermost, to
    the body ``inner`` makes of the request that reaches it; the chain's result."""

    def __init__(
        self,
        middleware: Sequence[Any],
        hooks: Hooks,
        request: Any,
        inner: Callable[[Any], Body[Any]],
    ) -> None:
        self.middleware, self.hooks, self.request, self.inner = middleware, hooks, request, inner

    @staticmethod
    def layer(hook: Callable[[Any, Any], Any], inner: Any) -> Any:
        """One layer of the chain: ``hook`` around what lies inside it."""
        return lambda request: hook(request, inner)

    alayer = layer

    def run(self) -> Any:
        _check_written(self.middleware, self.hooks.sync, self.hooks.async_, "sync")

        def handler(request: Any) -> Any:
            return drive(self.inner(request))

        for middleware in reversed(self.middleware):
            handler = self.layer(getattr(middleware, self.hooks.sync), handler)
        return handler(self.request)

    async def arun(self) -> Any:
        _check_written(self.middleware, self.hooks.async_, self.hooks.sync, "async")

        async def handler(request: Any) -> Any:
            return await adrive(self.inner(request))

        for middleware in reversed(self.middleware):
            handler = self.alayer(getattr(middleware, self.hooks.async_), handler)
        return await handler(self.request)


@dataclass(frozen=True)
class HookedResponse:
    """What a chain of ``wrap_model_call`` hooks gave: the model response, and the state
    updates their ``ExtendedModelResponse`` commands carry, the inner hooks' first."""

    response: ModelResponse
    commands: tuple[Command, ...] = ()


class ModelChain(Chain):
    """The chain of ``wrap_model_call`` hooks, composed as ``create_agent`` composes them:
    each hook's handler gives it a ``ModelResponse`` whatever the hook inside returned (an
    ``AIMessage``, an ``ExtendedModelResponse``), and the commands of an
    ``ExtendedModelResponse`` are kept apart, from the last handler call only (a retry
    drops the commands of the tries before it). The result is a :class:`HookedResponse`."""

    def __init__(self, middleware: Sequence[Any], request: Any, inner: Callable[[Any], Any]):
        super().__init__(middleware, MODEL_HOOKS, request, inner)

    @staticmethod
    def layer(hook: Callable[[Any, Any], Any], inner: Any) -> Any:
        def layer(request: Any) -> HookedResponse:
            below: list[Command] = []

            def handler(asked: Any) -> ModelResponse:
                below.clear()
                answer = hooked_response(inner(asked))
                below.extend(answer.commands)
                return answer.response

            answer = hooked_response(hook(request, handler))
            return HookedResponse(answer.response, (*below, *answer.commands))

        return layer

    @staticmethod
    def alayer(hook: Callable[[Any, Any], Any], inner: Any) -> Any:
        async def layer(request: Any) -> HookedResponse:
            below: list[Command] = []

            async def handler(asked: Any) -> ModelResponse:
                below.clear()
                answer = hooked_response(await inner(asked))
                below.extend(answer.commands)
                return answer.response

            answer = hooked_response(await hook(request, handler))
            return HookedResponse(answer.response, (*below, *answer.commands))

        return layer


def hooked_response(result: Any) -> HookedResponse:
    """What a ``wrap_model_call`` hook or handler returned, as a :class:`HookedResponse`."""
    if isinstance(result, HookedResponse):
        return result
    if isinstance(result, ExtendedModelResponse):
        commands = () if result.command is None else (result.command,)
        return HookedResponse(hooked_response(result.model_response).response, commands)
    if isinstance(result, AIMessage):
        return HookedResponse(ModelResponse(result=[result], structured_response=None))
    if isinstance(result, ModelResponse):
        return HookedResponse(result)
    raise TypeError(f"a wrap_model_call hook returned no model response: {result!r}")


UNSUPPORTED_COMMAND = (
    "{part} is not yet supported in a wrap_model_call hook's result, whose Command may only "
    "update the state (as under create_agent); jump with before_model/after_model hooks."
)


KEPT_BY_RUNTIME = (
    "A wrap_model_call hook's Command writes {names}, which the runtime keeps (approvals, "
    "budgets, outcomes); it may write {writable}."
)


def state_writes(
    commands: Sequence[Command], writable: Collection[str]
) -> tuple[dict[str, Any], ...]:
    """The state updates of the commands a ``wrap_model_call`` chain gave, each of which may
    write only the ``writable`` keys (the conversation, a structured response and the fields
    the middleware's and the user's state classes add).

    Raises:
        NotImplementedError: A command that routes (``goto``), resumes or names a graph, as
            ``create_agent`` refuses it.
        ValueError: A command that writes a key the runtime keeps.
    """
    for command in commands:
        for part in ("goto", "resume", "graph"):
            if getattr(command, part):
                raise NotImplementedError(UNSUPPORTED_COMMAND.format(part=f"Command {part}"))
    writes = tuple(dict(command.update) for command in commands if command.update)
    closed = sorted({key for write in writes for key in write} - set(writable))
    if closed:
        raise ValueError(KEPT_BY_RUNTIME.format(names=closed, writable=sorted(writable)))
    return writes


def hook_writable(middleware: Sequence[Any], state_schema: type | None) -> frozenset[str]:
    """The state keys a ``wrap_model_call`` hook's command may write: the conversation, a
    structured response and the fields the state classes add."""
    added = {
        name for own in added_schemas(middleware, state_schema) for name in get_type_hints(own)
    }
    return frozenset({"messages", "structured_response", *(added - LANGCHAIN_FIELDS)})


class StateHook(Effect):
    """One hook of the state (``before_model``, ``after_model``, ``before_agent`` or
    ``after_agent``: ``hooks``) of ``middleware`` on ``state``:
    the state update it returns, or ``None``. The sync face calls the sync hook; the async
    face the async one, or the sync one when that is all the middleware wrote (as
    ``create_agent`` runs a hook node)."""

    def __init__(self, middleware: Any, hooks: Hooks, state: Mapping[str, Any]) -> None:
        self.middleware, self.hooks, self.state = middleware, hooks, state

    def run(self) -> Mapping[str, Any] | None:
        _check_written([self.middleware], self.hooks.sync, self.hooks.async_, "sync")
        hook = getattr(self.middleware, self.hooks.sync)
        span = self._span()
        manager = get_callback_manager_for_config(ensure_config())
        run = manager.on_chain_start(None, span.inputs(self.state), name=span.name)
        try:
            written = hook(self.state, get_runtime())
        except BaseException as error:
            run.on_chain_error(error)
            raise
        run.on_chain_end(span.outputs(written))
        return cast("Mapping[str, Any] | None", written)

    async def arun(self) -> Mapping[str, Any] | None:
        if not _writes(self.middleware, self.hooks.async_):
            return self.run()
        hook = getattr(self.middleware, self.hooks.async_)
        span = self._span()
        manager = get_async_callback_manager_for_config(ensure_config())
        run = await manager.on_chain_start(None, span.inputs(self.state), name=span.name)
        try:
            written = await hook(self.state, get_runtime())
        except BaseException as error:
            await run.on_chain_error(error)
            raise
        await run.on_chain_end(span.outputs(written))
        return cast("Mapping[str, Any] | None", written)

    def _span(self) -> HookSpan:
        return HookSpan(f"{name_of(self.middleware)}.{self.hooks.sync}", self.middleware)


@dataclass(frozen=True)
class HookSpan:
    """A hook's run as tracers see it, named as ``create_agent`` names its node
    (``Middleware.before_model``), its payloads shaped by the middleware's trace policy (its
    own, else the process-wide default), read when the hook runs."""

    name: str
    middleware: Any

    def inputs(self, state: Mapping[str, Any]) -> dict[str, Any]:
        return dict(self._processed("process_inputs", dict(state)) or {})

    def outputs(self, written: Any) -> dict[str, Any]:
        processed = self._processed("process_outputs", written)
        return dict(processed) if isinstance(processed, Mapping) else {"output": processed}

    def _processed(self, field: str, payload: Any) -> Any:
        policy = trace_policy_of(getattr(self.middleware, "trace_policy", None))
        process = getattr(policy, field, None) if policy is not None else None
        return process(payload) if process is not None else payload


def _check_written(middleware: Sequence[Any], hook: str, other: str, face: str) -> None:
    for m in middleware:
        if not _writes(m, hook):
            calls = "invoke, stream" if face == "sync" else "ainvoke, astream"
            name = getattr(m, "name", type(m).__name__)
            raise FaceNotWritten(
                NOT_WRITTEN.format(name=name, written=other, missing=hook, face=face, calls=calls)
            )


def split_system(prompt: Sequence[BaseMessage]) -> tuple[SystemMessage | None, list[AnyMessage]]:
    """A prompt as LangChain's request holds it: its system message apart from the rest."""
    if prompt and isinstance(prompt[0], SystemMessage):
        return prompt[0], cast(list[AnyMessage], list(prompt[1:]))
    return None, cast(list[AnyMessage], list(prompt))


def prompt_of(asked: ModelRequest) -> list[BaseMessage]:
    system = [asked.system_message] if asked.system_message is not None else []
    return [*system, *asked.messages]


def bindable_tools(asked: ModelRequest) -> list[BaseTool]:
    """The request's tools that a model can be bound to here (provider tools as dicts are not
    ours to offer)."""
    return [tool for tool in asked.tools or () if isinstance(tool, BaseTool)]


def message_of(answer: Any) -> AIMessage:
    """The model message of what a hook returned: a ``ModelResponse`` (its last AI message),
    an ``ExtendedModelResponse`` or a bare ``AIMessage``."""
    if isinstance(answer, AIMessage):
        return answer
    response = getattr(answer, "model_response", answer)
    found = [m for m in getattr(response, "result", ()) if isinstance(m, AIMessage)]
    if not found:
        raise TypeError(f"a wrap_model_call hook returned no AI message: {answer!r}")
    return found[-1]
