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

Whatever binds the whole question crosses the boundary here, for every such
node: the subgraph gets the question's rejections and the model calls spent so
far (:func:`~reasoning_graphs.nodes.budget.question_bounds`; the graph's input
must be :class:`~reasoning_graphs.state.StepInput`), and its new rejections come
back. So a rejected call stays rejected in later steps and trials, and the
budgets cover them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.pregel import Pregel

from reasoning_graphs.nodes.budget import question_bounds

Input = Callable[[Mapping[str, Any]], dict[str, Any]]
Update = Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]


def subgraph_node(name: str, graph: Pregel, to_input: Input, to_update: Update) -> RunnableLambda:
    """A node that runs ``graph`` on ``to_input(state)`` and returns ``to_update(state, result)``.

    ``graph`` must be compiled without a checkpointer: it uses the parent's.
    """

    def run(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return _update(state, graph.invoke(_input(state), config))

    async def arun(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        return _update(state, await graph.ainvoke(_input(state), config))

    def _input(state: Mapping[str, Any]) -> dict[str, Any]:
        return {**to_input(state), **question_bounds(state)}

    def _update(state: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
        return {**to_update(state, result), "rejected": result.get("rejected") or {}}

    return RunnableLambda(run, afunc=arun, name=name)
