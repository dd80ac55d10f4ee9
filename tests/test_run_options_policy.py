"""Run options may make a graph stricter, never looser: any dev-server client can send them."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.context import AgentContext, Limits
from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from tests.helpers.tool_log import ToolLog, sleeping_tool


@pytest.fixture(params=["dataclass", "dict"])
def as_context(request: pytest.FixtureRequest):
    """Options as a Python caller passes them, or as the dev server does (a JSON object)."""

    def make(**options: Any) -> AgentContext | dict[str, Any]:
        return AgentContext(**options) if request.param == "dataclass" else options

    return make


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def decisions_by_tool(state: dict[str, Any]) -> dict[str, str]:
    return {
        m.name: m.response_metadata.get("decision")
        for m in state["messages"]
        if isinstance(m, ToolMessage)
    }


def recorded_tools(log: ToolLog) -> list[Any]:
    return [sleeping_tool(log, name, safe=False) for name in ("note", "look", "calculator")]


def test_run_lists_add_to_the_graphs_approvals_and_denials(log, thread, as_context) -> None:
    turn = tool_calls(
        ("note", {"item": "a"}), ("look", {"item": "b"}), ("calculator", {"item": "c"})
    )
    model = ScriptedChatModel(script=[turn, "done"])
    graph = build_graph(
        model,
        tools=recorded_tools(log),
        checkpointer=InMemorySaver(),
        approve=["note"],
        deny=["look"],
    )
    context = as_context(approve=["calculator"], deny=["calculator"])

    state = graph.invoke(ask("go"), thread, context=context)

    (interrupt,) = state["__interrupt__"]
    assert [call["name"] for call in interrupt.value["calls"]] == ["note"]
    assert log.runs == []

    state = graph.invoke(Command(resume=["approve"]), thread, context=context)

    assert log.names() == ["note"]
    assert decisions_by_tool(state) == {
        "note": "approved",
        "look": "blocked",
        "calculator": "blocked",
    }


def test_a_run_cannot_enable_a_tool_the_graph_lacks(log, thread, as_context) -> None:
    model = ScriptedChatModel(script=[tool_call("shell", item="rm"), "done"])
    graph = build_graph(model, tools=recorded_tools(log)[:1], checkpointer=InMemorySaver())

    with pytest.raises(ValueError, match="shell"):
        graph.invoke(ask("go"), thread, context=as_context(tools=["note", "shell"]))

    assert model.calls == []
    assert log.runs == []


def test_a_run_may_narrow_the_graphs_tools(log, thread, as_context) -> None:
    model = ScriptedChatModel(script=[tool_call("note", item="a"), "done"])
    graph = build_graph(model, tools=recorded_tools(log), checkpointer=InMemorySaver())

    graph.invoke(ask("go"), thread, context=as_context(tools=["look"]))

    assert "note" not in model.calls[0].tools
    assert log.runs == []


def counting_graph(log: ToolLog, replies: int, **options: Any) -> tuple[Any, ScriptedChatModel]:
    steps = [tool_call("look", item=str(i)) for i in range(replies)]
    model = ScriptedChatModel(script=[*steps, "done"])
    graph = build_graph(model, tools=recorded_tools(log), checkpointer=InMemorySaver(), **options)
    return graph, model


@pytest.mark.parametrize(
    ("built", "raised", "runs"),
    [
        ({"max_model_calls": 2}, {"max_model_calls": 50}, 2),
        # the first reply is stopped as it streams past the budget: no call of it runs
        ({"token_budget": 1}, {"token_budget": 10**9}, 0),
    ],
)
def test_a_run_cannot_raise_a_graphs_budget(log, thread, as_context, built, raised, runs) -> None:
    graph, _ = counting_graph(log, 5, **built)

    state = graph.invoke(ask("go"), thread, context=as_context(**raised))

    assert state["outcome"]["status"] == "incomplete"
    assert len(log.runs) == runs


def test_a_run_cannot_raise_the_calls_per_turn(log, thread, as_context) -> None:
    turn = tool_calls(("look", {"item": "a"}), ("note", {"item": "b"}))
    model = ScriptedChatModel(script=[turn, "done"])
    graph = build_graph(
        model, tools=recorded_tools(log), checkpointer=InMemorySaver(), max_tool_calls_per_turn=1
    )

    state = graph.invoke(ask("go"), thread, context=as_context(max_tool_calls_per_turn=8))

    assert log.names() == ["look"]
    assert decisions_by_tool(state)["note"] == "skipped"


def test_a_run_may_lower_a_budget_even_where_the_graph_has_none(log, thread, as_context) -> None:
    graph, _ = counting_graph(log, 5, max_model_calls=None)

    state = graph.invoke(ask("go"), thread, context=as_context(max_model_calls=1))

    assert state["outcome"]["status"] == "incomplete"
    assert len(log.runs) == 1


@pytest.mark.parametrize(
    "options",
    [
        {"max_model_calls": "50"},
        {"token_budget": True},
        {"approve": "shell"},
        {"deny": [1]},
        {"model": 3},
    ],
)
def test_options_of_the_wrong_type_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(options))):
        Limits().apply(options)


def test_a_run_tool_selection_stays_within_a_built_one() -> None:
    built = Limits(tools=("note", "look"))

    assert built.apply({"tools": ["look"]}).tools == ("look",)
    with pytest.raises(ValueError, match="shell"):
        built.apply({"tools": ["look", "shell"]})
