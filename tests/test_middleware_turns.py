"""LangChain's ``before_model``/``after_model`` middleware in the patterns, both faces.

Around each model turn of the ReAct-family loops the hooks run as under ``create_agent``
(their state kept, a jump to ``"end"`` honoured as an honest incomplete stop); on every
other model call they read the conversation and change the call's prompt wherever it
quotes what they changed. Each test uses LangChain's own classes.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import (
    AgentMiddleware,
    ModelCallLimitMiddleware,
    PIIMiddleware,
    SummarizationMiddleware,
    TodoListMiddleware,
    ToolCallLimitMiddleware,
    before_model,
)
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers.adder import Adder
from tests.helpers.faces import FACES, run
from tests.helpers.one_call import one_call

EMAIL = "alice@example.com"
TURN_PATTERNS = ["react", "react_text", "plan_react", "plan_execute", "reflexion"]
LOOPS = ["react", "react_text", "plan_react"]
"""The patterns whose whole question is one loop of turns."""


def ask(text: str = "What is 20+22?") -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def script_for(pattern: str) -> tuple[list[Any], dict[str, Any]]:
    if PATTERNS[pattern].uses_tools:
        return one_call(pattern, "add", {"a": 20, "b": 22}, "It is 42.")
    return ["It is 42."], {}


def prompts(model: ScriptedChatModel) -> list[str]:
    return [str(m.content) for call in model.calls for m in call.messages]


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_an_email_in_the_question_never_reaches_the_model(pattern: str, face: str) -> None:
    script, options = script_for(pattern)
    model = ScriptedChatModel(script=script, cycle=not PATTERNS[pattern].uses_tools)
    graph = graph_builder(pattern)(
        model,
        tools=[Adder().spec()],
        middleware=[PIIMiddleware("email", strategy="redact")],
        **options,
    )

    run(graph, ask(f"What is 20+22? Write to me at {EMAIL}."), face)

    assert model.calls
    assert not [text for text in prompts(model) if EMAIL in text]
    assert [text for text in prompts(model) if "[REDACTED_EMAIL]" in text]


def endless(count: int) -> list[Any]:
    return [tool_call("add", a=n, b=1) for n in range(count)]


def text_calls(count: int) -> list[str]:
    return [f'Thought: add\nAction: add\nAction Input: {{"a": {n}, "b": 1}}' for n in range(count)]


def looping(pattern: str, count: int) -> list[Any]:
    """A model that keeps calling ``add`` in ``pattern``'s loop."""
    if pattern == "react_text":
        return list(text_calls(count))
    if pattern == "plan_react":
        _, _ = one_call(pattern, "add", {"a": 1, "b": 1}, "")
        from reasoning_graphs.graphs.plan_react.plan import PlanItems

        return [PlanItems(items=["Add."]), *endless(count)]
    return endless(count)


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", LOOPS)
def test_a_model_call_limit_ends_the_question_honestly(pattern: str, face: str) -> None:
    model = ScriptedChatModel(script=looping(pattern, 8))
    adder = Adder()
    graph = graph_builder(pattern)(
        model,
        tools=[adder.spec()],
        middleware=[ModelCallLimitMiddleware(run_limit=2, exit_behavior="end")],
    )

    state = run(graph, ask(), face)

    assert len(model.calls) == 2  # plan_react's plan is one of them: every call counts
    assert len(adder.runs) == (1 if pattern == "plan_react" else 2)
    assert state["outcome"]["status"] == "incomplete"
    assert "ModelCallLimitMiddleware" in state["outcome"]["reason"]
    final = state["messages"][-1]
    assert isinstance(final, AIMessage)
    assert not final.tool_calls
    assert final.response_metadata["outcome"]["status"] == "incomplete"


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", ["react", "react_text"])
def test_a_tool_call_limit_answers_the_calls_past_it_without_running_them(
    pattern: str, face: str
) -> None:
    answer = "Thought: done\nFinal Answer: 42" if pattern == "react_text" else "42"
    model = ScriptedChatModel(script=[*looping(pattern, 3), answer])
    adder = Adder()
    graph = graph_builder(pattern)(
        model, tools=[adder.spec()], middleware=[ToolCallLimitMiddleware(run_limit=1)]
    )

    state = run(graph, ask(), face)

    assert adder.runs == [(0, 1)]
    answers = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert len(answers) == 3  # every call has exactly one observation
    assert [m.status for m in answers] == ["success", "error", "error"]
    assert state["outcome"]["status"] == "answered"


@pytest.mark.parametrize("face", FACES)
def test_a_tool_call_limit_that_ends_leaves_no_call_unanswered(face: str) -> None:
    model = ScriptedChatModel(script=[*endless(3), "42"])
    adder = Adder()
    limit = ToolCallLimitMiddleware(run_limit=1, exit_behavior="end")
    graph = graph_builder("react")(model, tools=[adder.spec()], middleware=[limit])

    state = run(graph, ask(), face)

    assert adder.runs == [(0, 1)]
    assert state["outcome"]["status"] == "incomplete"
    calls = [c["id"] for m in state["messages"] if isinstance(m, AIMessage) for c in m.tool_calls]
    answered = [m.tool_call_id for m in state["messages"] if isinstance(m, ToolMessage)]
    assert sorted(calls) == sorted(answered)


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", TURN_PATTERNS)
def test_a_summary_replaces_the_turns_it_covers(pattern: str, face: str) -> None:
    summarizer = ScriptedChatModel(script=["SUMMARY: the sums so far."], cycle=True)
    middleware = SummarizationMiddleware(
        model=summarizer, trigger=("messages", 4), keep=("messages", 2)
    )
    script, options = script_for(pattern)
    if pattern in ("react", "react_text"):
        script = [*looping(pattern, 3), script[-1]]
    model = ScriptedChatModel(script=script)
    graph = graph_builder(pattern)(
        model, tools=[Adder().spec()], middleware=[middleware], **options
    )

    state = run(graph, ask(), face)

    assert state["outcome"]["status"] == "answered"
    if pattern in ("react", "react_text"):
        assert summarizer.calls
        assert any("SUMMARY" in str(m.content) for m in model.calls[-1].messages)
        assert len(state["messages"]) < 9  # 3 rounds and the answer, had none been summed up


@pytest.mark.parametrize("face", FACES)
def test_a_todo_list_is_kept_in_the_state(face: str) -> None:
    todos = [{"content": "add the numbers", "status": "in_progress"}]
    model = ScriptedChatModel(
        script=[tool_call("write_todos", todos=todos), tool_call("add", a=20, b=22), "42"]
    )
    graph = graph_builder("react")(model, tools=[Adder().spec()], middleware=[TodoListMiddleware()])

    state = run(graph, ask(), face)

    assert state["todos"] == todos
    assert "write_todos" in model.calls[0].tools
    assert "write_todos" in str(model.calls[0].messages[0].content)
    assert state["outcome"]["status"] == "answered"


@before_model(can_jump_to=["end"])
def closed_on_sundays(state: Any, runtime: Any) -> dict[str, Any] | None:
    if "Sunday" in str(state["messages"][0].content):
        return {"jump_to": "end", "messages": [AIMessage("We are closed on Sundays.")]}
    return None


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", TURN_PATTERNS)
def test_a_users_own_hook_that_jumps_to_the_end_stops_before_any_turn(
    pattern: str, face: str
) -> None:
    script, options = script_for(pattern)
    model = ScriptedChatModel(script=script)
    adder = Adder()
    graph = graph_builder(pattern)(
        model, tools=[adder.spec()], middleware=[closed_on_sundays], **options
    )

    state = run(graph, ask("Add 20 and 22 on Sunday."), face)

    assert adder.runs == []
    assert state["outcome"]["status"] == "incomplete"


@pytest.mark.parametrize("face", FACES)
def test_the_same_hook_lets_a_correct_run_through(face: str) -> None:
    script, _ = script_for("react")
    adder = Adder()
    graph = graph_builder("react")(
        ScriptedChatModel(script=script), tools=[adder.spec()], middleware=[closed_on_sundays]
    )

    state = run(graph, ask(), face)

    assert adder.runs == [(20, 22)]
    assert state["outcome"]["status"] == "answered"


class SyncOnly(AgentMiddleware):
    """An ``after_model`` hook written only for the sync face."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self.seen.append(state["messages"][-1].text)
        return None


@pytest.mark.parametrize("face", FACES)
def test_a_sync_state_hook_runs_on_both_faces(face: str) -> None:
    hook = SyncOnly()
    script, _ = script_for("react")
    graph = graph_builder("react")(
        ScriptedChatModel(script=script), tools=[Adder().spec()], middleware=[hook]
    )

    run(graph, ask(), face)

    assert hook.seen == ["", "It is 42."]
