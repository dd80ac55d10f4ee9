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

Example:
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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langchain_core.tools import BaseTool

from reasoning_graphs.effects import Body, Effect, adrive, drive


@dataclass(frozen=True)
class Hooks:
    """The names of one hook's sync and async methods."""

    sync: str
    async_: str


NOT_WRITTEN = (
    "The middleware {name!r} writes {written} but not {missing}, which the {face} face "
    "({calls}) calls: write both, or run the graph on the other face."
)


class FaceNotWritten(NotImplementedError):
    """A middleware lacks the hook this face calls (``awrap_*`` on ``ainvoke``/``astream``)."""


NOT_RUN_HOOKS = (
    "before_agent",
    "abefore_agent",
    "before_model",
    "abefore_model",
    "after_model",
    "aafter_model",
    "after_agent",
    "aafter_agent",
)
"""Hooks of LangChain's middleware that the patterns do not run (yet)."""
NOT_RUN = (
    "The middleware {name!r} writes {hooks}, which reasoning-graphs does not run yet, so it "
    "would be silently left out: only wrap_model_call and wrap_tool_call hooks (and a "
    "middleware's tools) take part. Our own options do the common jobs: approvals "
    "(approve=, deny=, rules=), call limits (max_model_calls=, max_tool_calls=), summaries "
    "(context_strategy='summary')."
)


def check_runnable(middleware: Sequence[Any]) -> None:
    """Refuse, when the graph is built, a middleware whose hooks or state would be left out:
    a PII filter or a call limit that silently does nothing is worse than none."""
    for m in middleware:
        hooks = [h for h in NOT_RUN_HOOKS if _writes(m, h)]
        if _own_state(m):
            hooks.append("state fields of its own (" + ", ".join(_own_state(m)) + ")")
        if hooks:
            name = getattr(m, "name", type(m).__name__)
            raise ValueError(NOT_RUN.format(name=name, hooks=", ".join(hooks)))


def _own_state(middleware: Any) -> list[str]:
    """The state fields a middleware adds to LangChain's agent state."""
    schema = getattr(middleware, "state_schema", None)
    fields = getattr(schema, "__annotations__", {}) if schema is not None else {}
    return sorted(set(fields) - set(AgentState.__annotations__))


def _writes(middleware: Any, hook: str) -> bool:
    return getattr(type(middleware), hook, None) is not getattr(AgentMiddleware, hook)


MODEL_HOOKS = Hooks("wrap_model_call", "awrap_model_call")
TOOL_HOOKS = Hooks("wrap_tool_call", "awrap_tool_call")


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

    def run(self) -> Any:
        _check_written(self.middleware, self.hooks.sync, self.hooks.async_, "sync")

        def handler(request: Any) -> Any:
            return drive(self.inner(request))

        for middleware in reversed(self.middleware):
            handler = _layer(getattr(middleware, self.hooks.sync), handler)
        return handler(self.request)

    async def arun(self) -> Any:
        _check_written(self.middleware, self.hooks.async_, self.hooks.sync, "async")

        async def handler(request: Any) -> Any:
            return await adrive(self.inner(request))

        for middleware in reversed(self.middleware):
            handler = _layer(getattr(middleware, self.hooks.async_), handler)
        return await handler(self.request)


def _check_written(middleware: Sequence[Any], hook: str, other: str, face: str) -> None:
    for m in middleware:
        if not _writes(m, hook):
            calls = "invoke, stream" if face == "sync" else "ainvoke, astream"
            name = getattr(m, "name", type(m).__name__)
            raise FaceNotWritten(
                NOT_WRITTEN.format(name=name, written=other, missing=hook, face=face, calls=calls)
            )


def _layer(hook: Callable[[Any, Any], Any], inner: Any) -> Any:
    """One layer of the chain: ``hook`` around what lies inside it."""
    return lambda request: hook(request, inner)


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
