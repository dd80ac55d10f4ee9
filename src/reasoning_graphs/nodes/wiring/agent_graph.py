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

from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import partial
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from reasoning_graphs.effects import Body, effect_node
from reasoning_graphs.nodes.wiring.routed import Router, in_config, routed
from reasoning_graphs.private_names import RunnableCallable


class AgentGraph(StateGraph[Any, Any, Any, Any]):
    """A ``StateGraph`` whose plain-function nodes and routers run inline on both faces,
    and whose steps may route themselves (:meth:`add_routed_node`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.routes: dict[str, Router] = {}
        """The router of each node that routes itself, by node name."""
        self.unread_input: frozenset[str] = frozenset()
        """State fields a middleware keeps out of the input (``OmitFromInput``): an input may
        name them, and LangGraph leaves them out, as under ``create_agent``."""
        self._routed: dict[
            str, tuple[Callable[[Any], Body[Mapping[str, Any]]], tuple[str, ...]]
        ] = {}

    def add_routed_node(
        self,
        name: str,
        make_body: Callable[[Any], Body[Mapping[str, Any]]],
        route: Router,
        destinations: tuple[str, ...],
    ) -> AgentGraph:
        """A node whose step says where the graph goes next (:func:`routed`), drawn with an
        edge to each of ``destinations``. A client's state write as this node is routed
        the same way (see :class:`~reasoning_graphs.nodes.wiring.checked_graph.CheckedGraph`)."""
        self.add_node(name, effect_node(name, routed(make_body, route)), destinations=destinations)
        self.routes[name] = route
        self._routed[name] = (make_body, destinations)
        return self

    def entry(self) -> str:
        """The node the graph starts at."""
        (first,) = [end for start, end in self.edges if start == START]
        return first

    def start_at(self, node: str) -> None:
        """Start the graph at ``node`` instead of :meth:`entry` (added with its edges after)."""
        self.edges.discard((START, self.entry()))
        self.add_edge(START, node)

    def end_at(self, node: str) -> None:
        """Send every way out of the graph to ``node`` instead (added with its edge to the end
        after): edges, routers and the routes of steps that route themselves."""
        self.edges = {(start, node if end == END else end) for start, end in self.edges}
        for source, branches in self.branches.items():
            for name, branch in branches.items():
                if branch.ends is None:
                    raise ValueError(f"the router {name!r} after {source!r} declares no targets")
                ends = {key: node if end == END else end for key, end in branch.ends.items()}
                branches[name] = branch._replace(ends=ends)
        for name, (make_body, destinations) in list(self._routed.items()):
            if END in destinations:
                route = self.routes[name]
                del self.nodes[name]
                self.add_routed_node(
                    name,
                    make_body,
                    partial(_ended_at, route, node),
                    tuple(node if end == END else end for end in destinations),
                )

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
                branches[name] = branch._replace(path=InlineRoute(plain.func, name))
        return self


class InlineRoute(Runnable[Any, Any]):
    """A router called directly on both faces, in the config of the step it follows."""

    def __init__(self, func: Callable[[Any], Any], name: str):
        self.func, self.name = func, name

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return in_config(config, self.func, input)

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return self.invoke(input, config)


def _ended_at(route: Router, node: str, state: Any) -> str | Sequence[Send]:
    """``route``'s answer on ``state``, with ``node`` where it ends the graph."""
    goto = route(state)
    return node if goto == END else goto


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
