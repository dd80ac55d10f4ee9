"""A step that says where the graph goes next, instead of a router after it.

LangGraph runs a router (a conditional edge) on a fresh read of the state:
it copies every channel of the graph and writes the step's update into the
copies, then reads them. On a graph of many channels that copy costs more
than most routers' own work. The hottest step of the loop (``think``, twice
per short question) instead routes itself: it returns a ``Command`` whose
``goto`` is the router's answer on the state once its update is written
(:func:`~reasoning_graphs.nodes.grounding.report.state_after`), and the node
is added with the same ``destinations``, so the drawing keeps its edges.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.types import Command, Send

from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.grounding.report import state_after
from reasoning_graphs.state import AgentState

Router = Callable[[AgentState], str | Sequence[Send]]
"""Where a node goes next, from the state once its update is written."""


def routed(
    make_body: Callable[[Any], Body[Mapping[str, Any]]], route: Router
) -> Callable[[Any], Body[Command]]:
    """``make_body`` whose update goes with ``route``'s answer on the state after it.

    The step may write the conversation, the trajectory, the observations and keys
    without a reducer: those ``state_after`` writes as LangGraph would.
    """

    def body(state: Any) -> Body[Command]:
        update = yield from make_body(state)
        return routed_write(update, route, state_after(state, update))

    return body


def routed_write(update: Mapping[str, Any], route: Router, after: AgentState) -> Command:
    """``update`` as a ``Command`` that goes where ``route`` sends ``after``, the state once
    the update is written."""
    goto = route(after)
    return Command(update=update, goto=goto if isinstance(goto, str) else list(goto))


def in_config(config: RunnableConfig | None, route: Callable[[Any], Any], state: Any) -> Any:
    """``route(state)`` with ``config`` as the config ``get_config()`` reads (a router reads
    its run's options), for a router LangGraph does not call in its step's context."""
    token = var_child_runnable_config.set(config)
    try:
        return route(state)
    finally:
        var_child_runnable_config.reset(token)
