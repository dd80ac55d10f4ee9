"""A node that runs a whole graph (a ReAct attempt or a plan step) on its own conversation.

The subgraph is called directly from the node's sync and async bodies, so
LangGraph links it to the parent: its nodes show in Studio and in
``get_state(subgraphs=True)``, its approvals interrupt the parent run, and on
resume it continues from its own checkpoint inside the parent's.

It also runs with the parent's durability: LangGraph reads the mode from the
run config (see :mod:`reasoning_graphs.graphs._durability`), and this node
hands the subgraph its own config. Under the parent's ``durability="sync"``
each step of the subgraph is saved before its next step starts, so a tool
call it finished is not run again after a hard kill
(tests/test_crash_windows.py kills a Plan-and-Execute step between two calls).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.pregel import Pregel

Input = Callable[[Mapping[str, Any]], dict[str, Any]]
Update = Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]


def subgraph_node(name: str, graph: Pregel, to_input: Input, to_update: Update) -> RunnableLambda:
    """A node that runs ``graph`` on ``to_input(state)`` and returns ``to_update(state, result)``.

    ``graph`` must be compiled without a checkpointer: it uses the parent's.
    """

    def run(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return to_update(state, graph.invoke(to_input(state), config))

    async def arun(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return to_update(state, await graph.ainvoke(to_input(state), config))

    return RunnableLambda(run, afunc=arun, name=name)
