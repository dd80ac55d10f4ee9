"""A router reads the same state through our fresh read as through LangGraph's, which copies
every channel of the graph: the step's own writes applied, the rest as it was."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from typing_extensions import NotRequired, TypedDict

from reasoning_graphs.nodes.wiring.fresh_read import cheap_fresh_reads, fresh_read
from reasoning_graphs.state import Messages, merge_dicts


class State(TypedDict):
    messages: Messages
    tally: Annotated[list[int], operator.add]
    notes: NotRequired[Annotated[dict[str, str], merge_dicts]]
    last: NotRequired[str]
    untouched: NotRequired[str]


def build(seen: list[dict[str, Any]], cheap: bool) -> Any:
    def step(state: State) -> dict[str, Any]:
        turn = len(state["tally"])
        return {
            "messages": [AIMessage(f"turn {turn}")],
            "tally": [turn],
            "notes": {f"n{turn}": "x"},
            **({"last": f"t{turn}"} if turn % 2 else {}),
        }

    def fan(state: State) -> dict[str, Any]:
        return {"tally": [100]}

    def route(state: State) -> list[Send] | str:
        seen.append({**state, "messages": [m.content for m in state["messages"]]})
        if len(state["tally"]) == 2:
            return [Send("fan", {}), Send("fan", {})]
        return "step" if len(state["tally"]) < 5 else END

    graph = StateGraph(State)
    graph.add_node("step", step)
    graph.add_node("fan", fan)
    graph.add_edge(START, "step")
    graph.add_conditional_edges("step", route, ["step", "fan", END])
    graph.add_conditional_edges("fan", route, ["step", "fan", END])
    compiled = graph.compile()
    if cheap:
        cheap_fresh_reads(compiled)
    return compiled


@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_router_reads_what_langgraphs_fresh_read_gives(face: str) -> None:
    question = {"messages": [HumanMessage("go")], "tally": [], "untouched": "kept"}
    reads: dict[bool, list[dict[str, Any]]] = {}
    for cheap in (False, True):
        seen: list[dict[str, Any]] = []
        graph = build(seen, cheap)
        if face == "sync":
            graph.invoke(question)
        else:
            asyncio.run(graph.ainvoke(question))
        reads[cheap] = seen

    assert reads[True] == reads[False]
    assert len(reads[True]) == 5  # routes after the steps and after each concurrent fan task
    assert any(read.get("untouched") == "kept" for read in reads[True])


def test_every_router_of_a_graph_gets_the_cheap_read() -> None:
    graph = build([], cheap=True)
    readers = [
        writer.kwargs["reader"].func
        for node in graph.nodes.values()
        for writer in node.writers
        if "reader" in getattr(writer, "kwargs", {})
    ]
    assert readers == [fresh_read, fresh_read]
