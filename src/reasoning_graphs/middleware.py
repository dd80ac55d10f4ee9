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
from typing import Any

from langchain.agents.middleware import AgentMiddleware

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


MODEL_HOOKS = Hooks("wrap_model_call", "awrap_model_call")
TOOL_HOOKS = Hooks("wrap_tool_call", "awrap_tool_call")


def hooked(middleware: Sequence[AgentMiddleware], hooks: Hooks) -> tuple[AgentMiddleware, ...]:
    """The middleware that writes either method of ``hooks``, in order (as ``create_agent``
    chooses them)."""
    return tuple(
        m
        for m in middleware
        if getattr(type(m), hooks.sync) is not getattr(AgentMiddleware, hooks.sync)
        or getattr(type(m), hooks.async_) is not getattr(AgentMiddleware, hooks.async_)
    )


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
        if getattr(type(m), hook, None) is getattr(AgentMiddleware, hook):
            calls = "invoke, stream" if face == "sync" else "ainvoke, astream"
            name = getattr(m, "name", type(m).__name__)
            raise FaceNotWritten(
                NOT_WRITTEN.format(name=name, written=other, missing=hook, face=face, calls=calls)
            )


def _layer(hook: Callable[[Any, Any], Any], inner: Any) -> Any:
    """One layer of the chain: ``hook`` around what lies inside it."""
    return lambda request: hook(request, inner)
