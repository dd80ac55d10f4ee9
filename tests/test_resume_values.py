"""A resume value that answers nothing asks again, on every checkpointer and both faces.

LangGraph itself fails on ``Command(resume=None)``; our graphs address the
``None`` to each pending interrupt, which the approve node asks again with an
error. The same calls wait, and a proper decision then runs them once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command

from reasoning_graphs.graphs import plan_execute
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.review import ApprovalError
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers.tool_log import ToolLog, sleeping_tool

ASK = {"messages": [HumanMessage("deploy")]}


@pytest.fixture(params=["memory", "sqlite"])
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


def plan_step_graph(log: ToolLog, items: str) -> Any:
    """Plan-and-Execute with one step whose model deploys each of ``items`` in turn."""
    tools = [sleeping_tool(log, "deploy", safe=False, dangerous=True)]
    deploys = [tool_call("deploy", item=item) for item in items]
    script = [Plan(steps=["Deploy."]), *deploys, "ok", Replan(response="done")]
    model = ScriptedChatModel(script=script)
    return plan_execute.build_graph(model, tools=tools, checkpointer=InMemorySaver())


def deploy_graph(log: ToolLog, checkpointer: Any) -> Any:
    tools = [sleeping_tool(log, "deploy", safe=False, dangerous=True)]
    model = ScriptedChatModel(script=[tool_call("deploy", item="prod"), "done"])
    return build_graph(model, tools=tools, checkpointer=checkpointer)


@pytest.fixture
def sync_saver(kind: str, tmp_path: Path) -> Any:
    if kind == "memory":
        return InMemorySaver()
    return SqliteSaver(sqlite3.connect(tmp_path / "threads.sqlite", check_same_thread=False))


@pytest.fixture
async def async_saver(kind: str, tmp_path: Path) -> AsyncIterator[Any]:
    if kind == "memory":
        yield InMemorySaver()
        return
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
        yield saver


def waiting_on(snapshot: Any) -> tuple[str | None, list[str]]:
    """The checkpoint a thread stands at and the calls its interrupt asks about."""
    (interrupt,) = snapshot.interrupts
    calls = [call["name"] for call in interrupt.value["calls"]]
    return snapshot.config["configurable"]["checkpoint_id"], calls


def test_resume_none_asks_again(log, thread, sync_saver) -> None:
    graph = deploy_graph(log, sync_saver)
    graph.invoke(ASK, thread)

    state = graph.invoke(Command(resume=None), thread)

    (again,) = state["__interrupt__"]
    assert again.value["error"]
    assert waiting_on(graph.get_state(thread))[1] == ["deploy"]
    assert log.runs == []
    state = graph.invoke(Command(resume=["approve"]), thread)
    assert log.names() == ["deploy"]
    assert state["messages"][-1].content == "done"


async def test_resume_none_asks_again_on_the_async_face(log, thread, async_saver) -> None:
    graph = deploy_graph(log, async_saver)
    await graph.ainvoke(ASK, thread)

    state = await graph.ainvoke(Command(resume=None), thread)

    (again,) = state["__interrupt__"]
    assert again.value["error"]
    assert waiting_on(await graph.aget_state(thread))[1] == ["deploy"]
    assert log.runs == []
    state = await graph.ainvoke(Command(resume=["approve"]), thread)
    assert log.names() == ["deploy"]
    assert state["messages"][-1].content == "done"


def test_none_for_the_interrupt_by_id_is_asked_again(log, thread, sync_saver) -> None:
    graph = deploy_graph(log, sync_saver)
    graph.invoke(ASK, thread)
    (interrupt,) = graph.get_state(thread).interrupts

    state = graph.invoke(Command(resume={interrupt.id: None}), thread)

    (again,) = state["__interrupt__"]
    assert again.value["error"]
    assert [call["name"] for call in again.value["calls"]] == ["deploy"]
    assert log.runs == []
    state = graph.invoke(Command(resume=["approve"]), thread)
    assert log.names() == ["deploy"]


def test_resume_none_inside_a_plan_step_asks_again(log, thread) -> None:
    graph = plan_step_graph(log, "a")
    graph.invoke(ASK, thread)

    state = graph.invoke(Command(resume=None), thread)

    (again,) = state["__interrupt__"]
    assert again.value["error"]
    assert log.runs == []
    state = graph.invoke(Command(resume=["approve"]), thread)
    assert log.names() == ["deploy"]
    assert state["messages"][-1].content == "done"


def test_resume_none_with_nothing_pending_is_a_clear_error(log, thread, sync_saver) -> None:
    graph = deploy_graph(log, sync_saver)

    with pytest.raises(ApprovalError):
        graph.invoke(Command(resume=None), thread)


def test_an_approval_inside_a_plan_step_answers_only_the_call_it_was_given_for(log, thread) -> None:
    """LangGraph keeps a bare resume for the paused task, and a plan step is one task until it
    ends: without addressing, the first approval would also approve the step's third call."""
    graph = plan_step_graph(log, "abc")
    graph.invoke(ASK, thread)
    state = graph.invoke(Command(resume="approve"), thread)
    (second,) = state["__interrupt__"]

    state = graph.invoke(Command(resume={second.id: "approve"}), thread)

    (third,) = state["__interrupt__"]
    assert [call["args"] for call in third.value["calls"]] == [{"item": "c"}]
    assert [run["args"]["item"] for run in log.runs] == ["a", "b"]


def test_a_malformed_answer_inside_a_plan_step_is_asked_again_not_taken_from_earlier(
    log, thread
) -> None:
    graph = plan_step_graph(log, "ab")
    graph.invoke(ASK, thread)
    state = graph.invoke(Command(resume="approve"), thread)
    (second,) = state["__interrupt__"]

    state = graph.invoke(Command(resume={second.id: "maybe"}), thread)

    (again,) = state["__interrupt__"]
    assert again.value["error"]
    assert [run["args"]["item"] for run in log.runs] == ["a"]


@pytest.mark.parametrize("pattern", ["react", "plan_execute"])
def test_a_decision_sent_again_never_answers_the_next_question(log, thread, pattern) -> None:
    """A double click or a client's retry: the same decision, named for the question it
    was given for, arrives once that question is answered and the next one waits."""
    if pattern == "plan_execute":
        graph = plan_step_graph(log, "ab")
    else:
        tools = [sleeping_tool(log, "deploy", safe=False, dangerous=True)]
        script = [tool_call("deploy", item="a"), tool_call("deploy", item="b"), "done"]
        graph = build_graph(
            ScriptedChatModel(script=script), tools=tools, checkpointer=InMemorySaver()
        )
    (first,) = graph.invoke(ASK, thread)["__interrupt__"]
    decision = Command(resume={first.id: "approve"})
    (second,) = graph.invoke(decision, thread)["__interrupt__"]
    assert [call["args"] for call in second.value["calls"]] == [{"item": "b"}]

    with pytest.raises(ApprovalError, match="answered since"):
        graph.invoke(decision, thread)

    assert [run["args"]["item"] for run in log.runs] == ["a"]
    assert graph.get_state(thread).interrupts[0].value["calls"][0]["args"] == {"item": "b"}


def test_a_resume_an_engine_builds_with_goto_none_is_addressed_too(log, thread, sync_saver) -> None:
    """Aegra builds a client's resume as ``Command(goto=None, ...)``: still only a resume."""
    graph = deploy_graph(log, sync_saver)
    graph.invoke(ASK, thread)

    state = graph.invoke(Command(resume=None, goto=None), thread)  # type: ignore[arg-type]

    (again,) = state["__interrupt__"]
    assert again.value["error"]
    assert log.runs == []
