"""The graph builder every pattern uses: its plain steps run where they are called.

LangGraph wraps a plain function (a node that does no outside work, or a
router) so that the async face runs it in a worker thread, and it traces each
router as a run of its own. Our plain steps only read the state and compute,
so both are pure cost: a thread hand-off per step on ``ainvoke``/``astream``,
and a callback run per route on both faces. :class:`AgentGraph` runs them
inline on both faces instead; a step that waits on something outside is an
:func:`~reasoning_graphs.effects.effect_node`, with its own async face.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import partial
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.graph import StateGraph

try:  # the callable LangGraph makes of a plain function: private, so a move falls back
    from langgraph._internal._runnable import RunnableCallable
except ImportError:  # pragma: no cover - depends on the LangGraph version
    RunnableCallable = None  # type: ignore[assignment,misc]


class AgentGraph(StateGraph[Any, Any, Any, Any]):
    """A ``StateGraph`` whose plain-function nodes and routers run inline on both faces."""

    def add_node(self, node: Any, action: Any = None, **kwargs: Any) -> AgentGraph:
        super().add_node(node, action, **kwargs)
        name = node if isinstance(node, str) else getattr(node, "name", None) or node.__name__
        plain = _plain(self.nodes[name].runnable)
        if plain is not None:
            plain.afunc = _inline(plain.func)
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Any,
        path_map: dict[Hashable, str] | list[str] | None = None,
    ) -> AgentGraph:
        super().add_conditional_edges(source, path, path_map)
        branches = self.branches[source]
        for name, branch in branches.items():
            plain = _plain(branch.path)
            if plain is not None and not plain.func_accepts:  # a router of the state alone
                branches[name] = branch._replace(path=Route(plain.func, name))
        return self


class Route(Runnable[Any, Any]):
    """A router called directly on both faces, in the config of the step it follows."""

    def __init__(self, func: Callable[[Any], Any], name: str):
        self.func, self.name = func, name

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        token = var_child_runnable_config.set(config)  # for get_config() in the router
        try:
            return self.func(input)
        finally:
            var_child_runnable_config.reset(token)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self.invoke(input, config)


def _plain(runnable: Any) -> Any:
    """``runnable`` if it is LangGraph's wrapper of a plain sync function, whose async face
    is that function in a worker thread; else ``None``."""
    if RunnableCallable is None or not isinstance(runnable, RunnableCallable):
        return None
    if runnable.func is None or not isinstance(runnable.afunc, partial):
        return None
    return runnable


def _inline(func: Callable[..., Any]) -> Callable[..., Any]:
    async def call(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return call
