"""LangChain's ``ModelCallLimitMiddleware`` and ``ToolCallLimitMiddleware`` in every pattern,
both faces: read as budgets of ours, they bound every model call and every tool run of a
question (``run_limit``) or a thread (``thread_limit``), end the question honestly or
raise LangChain's own errors, and leave a run that stays within them as it was."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import ModelCallLimitMiddleware, ToolCallLimitMiddleware
from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
from langchain.agents.middleware.tool_call_limit import ToolCallLimitExceededError
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.testing import ScriptedChatModel, tool_calls
from tests.helpers.adder import Adder
from tests.helpers.faces import FACES, run
from tests.helpers.one_call import one_call

TOOL_PATTERNS = [name for name, pattern in PATTERNS.items() if pattern.uses_tools]


def ask(text: str = "What is 20+22?") -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def scripted(pattern: str) -> tuple[ScriptedChatModel, dict[str, Any]]:
    """A model that answers ``pattern``'s question with one ``add`` call (no call in the
    patterns without tools), and the build options that go with it."""
    if PATTERNS[pattern].uses_tools:
        script, options = one_call(pattern, "add", {"a": 20, "b": 22}, "It is 42.")
        return ScriptedChatModel(script=[*script, "It is 42."]), options
    return ScriptedChatModel(script=["It is 42."], cycle=True), {}


def build(pattern: str, middleware: list[Any], adder: Adder, **extra: Any) -> Any:
    model, options = scripted(pattern)
    graph = graph_builder(pattern)(
        model, tools=[adder.spec()], middleware=middleware, **options, **extra
    )
    return graph, model


def model_calls(model: ScriptedChatModel) -> int:
    return len(model.calls)


def ended_honestly(state: dict[str, Any], middleware: str) -> None:
    assert state["outcome"]["status"] == "incomplete"
    assert middleware in state["outcome"]["reason"]
    final = state["messages"][-1]
    assert isinstance(final, AIMessage)
    assert not final.tool_calls
    calls = [c["id"] for m in state["messages"] if isinstance(m, AIMessage) for c in m.tool_calls]
    answered = {m.tool_call_id for m in state["messages"] if isinstance(m, ToolMessage)}
    assert set(calls) <= answered  # every call the conversation holds has its observation


# --- model calls ------------------------------------------------------------------------


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_a_model_call_limit_allows_no_call_past_it_in_every_pattern(
    pattern: str, face: str
) -> None:
    extra = {"samples": 3} if pattern == "cot" else {}
    graph, model = build(pattern, [ModelCallLimitMiddleware(run_limit=1)], Adder(), **extra)

    state = run(graph, ask(), face)

    assert model_calls(model) == 1  # not even the closing call other budgets allow
    if pattern == "cot":  # one sample of three starts, and the vote is over it
        assert len(state["samples"]) == 1
        assert [e for e in state["trajectory"] if e.get("kind") == "batch_cut"]
    else:
        ended_honestly(state, "ModelCallLimitMiddleware")


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_a_run_within_the_limits_is_as_it_was(pattern: str, face: str) -> None:
    plain_graph, plain_model = build(pattern, [], Adder())
    expected = run(plain_graph, ask(), face)
    limits = [
        ModelCallLimitMiddleware(run_limit=50, thread_limit=100),
        ToolCallLimitMiddleware(run_limit=5),
        ToolCallLimitMiddleware(tool_name="add", thread_limit=5, exit_behavior="end"),
    ]
    adder = Adder()
    graph, model = build(pattern, limits, adder)

    state = run(graph, ask(), face)

    assert state["outcome"] == expected["outcome"]
    assert state["messages"][-1].text == expected["messages"][-1].text
    assert model_calls(model) == model_calls(plain_model)
    assert len(adder.runs) == (1 if PATTERNS[pattern].uses_tools else 0)


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", ["react", "rewoo", "tot", "lats"])
def test_a_model_call_limit_that_errors_raises_langchains_error(pattern: str, face: str) -> None:
    limit = ModelCallLimitMiddleware(run_limit=1, exit_behavior="error")
    graph, model = build(pattern, [limit], Adder())

    with pytest.raises(ModelCallLimitExceededError):
        run(graph, ask(), face)
    assert model_calls(model) == 1


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_a_thread_limit_counts_every_question_of_the_thread(pattern: str, face: str) -> None:
    first_graph, first_model = build(pattern, [], Adder(), checkpointer=InMemorySaver())
    expected = run(first_graph, ask(), face, {"configurable": {"thread_id": "measure"}})
    per_question = model_calls(first_model)
    limit = ModelCallLimitMiddleware(thread_limit=per_question)
    graph, model = build(pattern, [limit], Adder(), checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}

    first = run(graph, ask(), face, config)
    second = run(graph, ask("And 21+21?"), face, config)

    assert first["outcome"] == expected["outcome"]
    assert model_calls(model) == per_question  # the second question made none
    ended_honestly(second, "ModelCallLimitMiddleware")


# --- tool calls -------------------------------------------------------------------------


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_a_call_past_a_tool_limit_is_answered_without_running(pattern: str, face: str) -> None:
    adder = Adder()
    graph, _ = build(pattern, [ToolCallLimitMiddleware(tool_name="add", run_limit=0)], adder)

    state = run(graph, ask(), face)

    assert adder.runs == []
    settled = [e["decision"] for e in state["trajectory"] if e.get("tool") == "add"]
    assert settled
    assert set(settled) == {"skipped"}  # answered without running
    assert state["outcome"]["status"] == "answered"  # "continue": the question goes on


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_a_tool_limit_that_ends_ends_the_question_honestly(pattern: str, face: str) -> None:
    adder = Adder()
    limit = ToolCallLimitMiddleware(run_limit=0, exit_behavior="end")
    graph, _ = build(pattern, [limit], adder)

    state = run(graph, ask(), face)

    assert adder.runs == []
    ended_honestly(state, "ToolCallLimitMiddleware")


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_a_tool_limit_that_errors_raises_langchains_error(pattern: str, face: str) -> None:
    adder = Adder()
    limit = ToolCallLimitMiddleware(tool_name="add", run_limit=0, exit_behavior="error")
    graph, _ = build(pattern, [limit], adder)

    with pytest.raises(ToolCallLimitExceededError):
        run(graph, ask(), face)
    assert adder.runs == []


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_a_limit_on_another_tool_leaves_the_call_alone(pattern: str, face: str) -> None:
    adder = Adder()
    limit = ToolCallLimitMiddleware(tool_name="search", run_limit=0, exit_behavior="end")
    graph, _ = build(pattern, [limit], adder)

    state = run(graph, ask(), face)

    assert adder.runs == [(20, 22)]
    assert state["outcome"]["status"] == "answered"


@pytest.mark.parametrize("face", FACES)
def test_the_calls_of_one_turn_count_in_the_models_order(face: str) -> None:
    adder = Adder()
    model = ScriptedChatModel(
        script=[tool_calls(("add", {"a": 1, "b": 1}), ("add", {"a": 2, "b": 2})), "Done."]
    )
    graph = graph_builder("react")(
        model, tools=[adder.spec()], middleware=[ToolCallLimitMiddleware(run_limit=1)]
    )

    state = run(graph, ask(), face)

    assert adder.runs == [(1, 1)]
    answers = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.status for m in answers] == ["success", "error"]


@pytest.mark.parametrize("face", FACES)
def test_the_tasks_of_one_compiler_plan_share_the_tool_limit(face: str) -> None:
    adder = Adder()
    tasks = [
        {"id": 1, "tool": "add", "args": {"a": 1, "b": 1}, "deps": []},
        {"id": 2, "tool": "add", "args": {"a": 2, "b": 2}, "deps": []},
        {"id": 3, "tool": "add", "args": {"a": 3, "b": 3}, "deps": []},
    ]
    model = ScriptedChatModel(
        script=[{"tasks": tasks}, {"answer": "Done.", "replan": False, "reason": ""}]
    )
    graph = graph_builder("llm_compiler")(
        model, tools=[adder.spec()], middleware=[ToolCallLimitMiddleware(run_limit=2)]
    )

    state = run(graph, ask(), face)

    assert len(adder.runs) == 2
    assert state["outcome"]["status"] == "answered"


@pytest.mark.parametrize("face", FACES)
def test_a_step_of_plan_and_execute_counts_the_whole_question(face: str) -> None:
    from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
    from reasoning_graphs.testing import tool_call

    adder = Adder()
    model = ScriptedChatModel(
        script=[
            Plan(steps=["Add one.", "Add two."]),
            tool_call("add", a=1, b=1),
            "2",
            Replan(steps=["Add two."]),
            tool_call("add", a=2, b=2),
            "4",
            Replan(response="Done."),
        ]
    )
    graph = graph_builder("plan_execute")(
        model, tools=[adder.spec()], middleware=[ToolCallLimitMiddleware(run_limit=1)]
    )

    run(graph, ask(), face)

    assert adder.runs == [(1, 1)]  # the second step's call is past the question's limit


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_a_tool_thread_limit_counts_the_calls_of_earlier_questions(pattern: str, face: str) -> None:
    script, options = one_call(pattern, "add", {"a": 20, "b": 22}, "It is 42.")
    model = ScriptedChatModel(script=[*script, *script, "It is 42."])
    adder = Adder()
    limit = ToolCallLimitMiddleware(tool_name="add", thread_limit=1)
    graph = graph_builder(pattern)(
        model, tools=[adder.spec()], middleware=[limit], checkpointer=InMemorySaver(), **options
    )
    config = {"configurable": {"thread_id": "t"}}

    run(graph, ask(), face, config)
    run(graph, ask("And again?"), face, config)

    assert adder.runs == [(20, 22)]  # the second question's call is past the thread's limit
