"""A tool call is decided once: one triage and one check of its arguments per call, whichever
way its turn goes (straight to ``act``, through ``approve``, across a person's decision)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START
from langgraph.types import Command

from reasoning_graphs.effects import effect_node
from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.nodes.model.setup import agent_setup
from reasoning_graphs.nodes.steps import approve
from reasoning_graphs.nodes.steps.think import make_think, wants_tools
from reasoning_graphs.nodes.wiring.tool_loop import add_tool_loop, agent_graph_builder
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import ToolSpec, tool_spec


class Spy:
    """How many times each call was triaged, and its arguments checked, by call id / item."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.triaged: Counter[str] = Counter()
        self.checked: Counter[str] = Counter()
        triage_calls, call_error = approve._triage_calls, ToolRegistry.call_error

        def counted_triage(run: Any, state: Any, calls: Any, *rest: Any) -> Any:
            self.triaged.update(call["id"] for call in calls)
            return triage_calls(run, state, calls, *rest)

        def counted_check(registry: ToolRegistry, name: str, args: Mapping[str, Any]) -> Any:
            self.checked[repr(args.get("item"))] += 1
            return call_error(registry, name, args)

        monkeypatch.setattr(approve, "_triage_calls", counted_triage)
        monkeypatch.setattr(ToolRegistry, "call_error", counted_check)


def recorded(name: str, *, dangerous: bool = False, read_only: bool = True) -> ToolSpec:
    def run(item: str) -> str:
        return f"{name} {item}"

    run.__name__ = name
    return tool_spec(run, description=name, dangerous=dangerous, concurrency_safe=read_only)


def run_graph(script: list[Any], thread: RunnableConfig, *resumes: Any) -> dict[str, Any]:
    tools = [
        recorded("lookup"),
        recorded("write", read_only=False),
        recorded("deploy", dangerous=True, read_only=False),
    ]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=tools, checkpointer=InMemorySaver())
    state = graph.invoke({"messages": [HumanMessage("go")]}, thread)
    for resume in resumes:
        state = graph.invoke(Command(resume=resume), thread)
    assert "__interrupt__" not in state
    return state


def ran(state: dict[str, Any]) -> list[str]:
    return [m.tool_call_id for m in state["messages"] if isinstance(m, ToolMessage)]


@pytest.mark.parametrize(
    ("turn", "resumes"),
    [
        pytest.param(tool_call("lookup", "c1", item="a"), [], id="straight-to-act"),
        pytest.param(
            tool_calls(("write", {"item": "a"}, "c1"), ("write", {"item": "b"}, "c2")),
            [],
            id="in-order-through-approve",
        ),
        pytest.param(
            tool_calls(("lookup", {"item": "a"}, "c1"), ("deploy", {"item": "b"}, "c2")),
            [[{"type": "approve"}]],
            id="a-person-decides",
        ),
        pytest.param(
            tool_call("deploy", "c1", item="a"),
            [[{"type": "edit", "args": {"item": 5}}], [{"type": "approve"}]],
            id="an-unfit-edit-asked-again",
        ),
    ],
)
def test_each_call_is_triaged_and_checked_once(monkeypatch, thread, turn, resumes) -> None:
    spy = Spy(monkeypatch)

    state = run_graph([turn, "done"], thread, *resumes)

    calls = [call["id"] for call in turn.tool_calls]
    assert ran(state) == calls
    assert spy.triaged == Counter(calls)
    assert spy.checked == Counter(repr(call["args"]["item"]) for call in turn.tool_calls)


def test_a_call_off_its_schema_is_answered_before_it_runs(monkeypatch, thread) -> None:
    spy = Spy(monkeypatch)

    state = run_graph([tool_call("lookup", "c1", item=[1]), "done"], thread)

    (answer,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert answer.status == "error"
    assert answer.response_metadata["decision"] == "invalid"  # settled, never run
    assert spy.checked == Counter({repr([1]): 1})
    assert state["messages"][-1].content == "done"


def test_a_thread_paused_in_approve_before_the_router_triaged_resumes(thread) -> None:
    """A thread saved while ``approve`` asked, by a graph whose router only named the node
    (approve then gets the state, not the router's triage), resumes and settles its turn."""
    turn = tool_calls(("lookup", {"item": "a"}, "c1"), ("deploy", {"item": "b"}, "c2"))
    tools = [recorded("lookup"), recorded("deploy", dangerous=True, read_only=False)]
    setup = agent_setup(ScriptedChatModel(script=[turn, "done"]), tools)
    builder = agent_graph_builder()
    builder.add_node("think", effect_node("think", make_think(setup)))
    builder.add_edge(START, "think")
    builder.add_conditional_edges(
        "think",
        lambda state: "approve" if wants_tools(state["messages"][-1]) else END,
        ["approve", END],
    )
    add_tool_loop(builder, setup)
    graph = builder.compile(checkpointer=InMemorySaver())

    paused = graph.invoke({"messages": [HumanMessage("go")]}, thread)
    state = graph.invoke(Command(resume=[{"type": "edit", "args": {"item": "z"}}]), thread)

    assert [call["id"] for call in paused["__interrupt__"][0].value["calls"]] == ["c2"]
    observed = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
    assert observed[0] == "lookup a"
    assert observed[1].endswith("deploy z")  # after the notice of the person's edit
    assert len(observed) == 2
    assert state["messages"][-1].content == "done"


def test_a_call_off_its_schema_proposed_again_stops_the_run(thread) -> None:
    """Settled before it runs, a call whose arguments cannot run still counts as a failure:
    proposing it again as it is stops the run, as any repeated failure does."""
    again = [tool_call("lookup", item=[1]) for _ in range(3)]

    state = run_graph([*again, "done"], thread)

    assert state["outcome"]["status"] == "incomplete"
    decisions = [
        m.response_metadata["decision"] for m in state["messages"] if isinstance(m, ToolMessage)
    ]
    assert decisions == ["invalid", "skipped"]
