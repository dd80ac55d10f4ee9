"""Typed ReAct steps (``step_format="structured"``) in ``react`` and ``react_text``: a step
runs its tool through the shared loop, the step rules ask, retry or stop, a malformed step
is a corrective observation, and the run option is bounded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs import LowConfidence, NeedsMoreInfo
from reasoning_graphs.graphs import react, react_text
from reasoning_graphs.nodes.steps.prompts import WHY_THIS_TOOL
from reasoning_graphs.nodes.steps.typed_step import STEP_SCHEMA, step_schema
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import calculator
from tests.helpers.tool_log import ToolLog, sleeping_tool

Builder = Callable[..., CompiledStateGraph]
BUILDERS = [react.build_graph, react_text.build_graph]
IDS = ["react", "react_text"]
CLOSING = {"react": "I could not finish this.", "react_text": "Final Answer: I could not finish."}


def step(action: str, confidence: float = 0.9, **fields: Any) -> dict[str, Any]:
    thought = fields.pop("thought", f"{action}, not another tool, gives what I need.")
    blank = {"input": {}, "answer": ""}
    return {**blank, "thought": thought, "action": action, "confidence": confidence, **fields}


CALCULATE = step("calculator", input={"expression": "6*7"})
ANSWER = step("final_answer", answer="42")


def lookup(log: ToolLog) -> Any:
    return sleeping_tool(log, "lookup", safe=True)


def ask(question: str = "What is 6*7?") -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def observations(state: dict[str, Any]) -> list[str]:
    return [str(m.content) for m in state["messages"] if isinstance(m, ToolMessage)]


def thoughts(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in state["trajectory"] if e["kind"] == "thought"]


@pytest.mark.parametrize("build", BUILDERS, ids=IDS)
def test_a_typed_step_runs_its_tool_and_a_final_answer_ends_the_turn(build: Builder) -> None:
    model = ScriptedChatModel(script=[CALCULATE, ANSWER])
    graph = build(model, tools=[calculator()], step_format="structured")

    state = graph.invoke(ask())

    assert observations(state) == ["42"]
    assert state["messages"][-1].content == "42"
    assert state["outcome"] == {"status": "answered"}
    assert [call.tools for call in model.calls] == [[STEP_SCHEMA], [STEP_SCHEMA]]
    first, last = thoughts(state)
    assert (first["tool_calls"], first["confidence"], first["needs_more_info"]) == (
        ["calculator"],
        0.9,
        False,
    )
    assert last["tool_calls"] == []


@pytest.mark.parametrize("build", BUILDERS, ids=IDS)
async def test_the_async_face_runs_typed_steps(build: Builder) -> None:
    model = ScriptedChatModel(script=[CALCULATE, ANSWER])
    graph = build(model, tools=[calculator()], step_format="structured")

    state = await graph.ainvoke(ask())

    assert observations(state) == ["42"]
    assert state["outcome"] == {"status": "answered"}


def test_the_system_prompt_asks_why_this_tool_in_both_step_formats() -> None:
    native = ScriptedChatModel(script=[tool_call("calculator", expression="6*7"), "42"])
    react.build_graph(native, tools=[calculator()]).invoke(ask())
    typed = ScriptedChatModel(script=[CALCULATE, ANSWER])
    react.build_graph(typed, tools=[calculator()], step_format="structured").invoke(ask())

    for model in (native, typed):
        system = model.prompts[0][0]
        assert isinstance(system, SystemMessage)
        assert WHY_THIS_TOOL in system.text


@pytest.mark.parametrize("build", BUILDERS, ids=IDS)
def test_ask_ends_the_turn_with_the_models_question(build: Builder, log: ToolLog) -> None:
    unsure = step("lookup", 0.3, input={"item": "6*7"}, question="Which product?")
    model = ScriptedChatModel(script=[unsure])
    rules = [LowConfidence(below=0.5, then="ask")]
    graph = build(model, tools=[lookup(log)], step_format="structured", step_rules=rules)

    state = graph.invoke(ask())

    assert log.names() == []
    assert state["messages"][-1].content == "Which product?"
    assert state["outcome"]["status"] == "incomplete"
    assert "0.30" in state["outcome"]["reason"]
    assert thoughts(state)[0]["confidence"] == 0.3
    assert len(model.calls) == 1


@pytest.mark.parametrize("build", BUILDERS, ids=IDS)
def test_needs_more_info_asks_a_question_made_from_the_thought(build: Builder) -> None:
    unsure = step("final_answer", answer="?", needs_more_info=True, thought="Which file is it?")
    model = ScriptedChatModel(script=[unsure])
    rules = [NeedsMoreInfo(then="ask")]
    graph = build(model, tools=[calculator()], step_format="structured", step_rules=rules)

    state = graph.invoke(ask("Fix the file."))

    question = state["messages"][-1].content
    assert "Which file is it?" in question
    assert question.rstrip().endswith("?")
    assert state["outcome"]["status"] == "incomplete"
    assert thoughts(state)[0]["needs_more_info"] is True


@pytest.mark.parametrize("build", BUILDERS, ids=IDS)
def test_retry_asks_again_with_a_note_and_the_confident_step_runs(build: Builder) -> None:
    unsure = step("calculator", 0.2, input={"expression": "6+7"})
    model = ScriptedChatModel(script=[unsure, CALCULATE, ANSWER])
    rules = [LowConfidence(below=0.5, then="retry")]
    graph = build(model, tools=[calculator()], step_format="structured", step_rules=rules)

    state = graph.invoke(ask())

    assert observations(state) == ["42"]  # the unsure 6+7 never ran
    assert state["outcome"] == {"status": "answered"}
    retry_prompt = model.prompts[1]
    assert "0.20" in retry_prompt[-1].text  # the note says why the step was not used
    assert isinstance(retry_prompt[-2], AIMessage)
    assert [e["confidence"] for e in thoughts(state)] == [0.2, 0.9, 0.9]


@pytest.mark.parametrize("build", BUILDERS, ids=IDS)
def test_stop_stops_honestly_without_running_the_step(
    build: Builder, request: pytest.FixtureRequest, log: ToolLog
) -> None:
    closing = CLOSING[request.node.callspec.id]
    model = ScriptedChatModel(script=[step("lookup", 0.1, input={"item": "x"}), closing])
    rules = [LowConfidence(below=0.5, then="stop")]
    graph = build(model, tools=[lookup(log)], step_format="structured", step_rules=rules)

    state = graph.invoke(ask())

    assert log.names() == []
    assert state["outcome"]["status"] == "incomplete"
    assert "step rule" in state["outcome"]["reason"]


@pytest.mark.parametrize("build", BUILDERS, ids=IDS)
def test_a_confident_step_is_not_harmed_by_the_rules(build: Builder) -> None:
    model = ScriptedChatModel(script=[CALCULATE, ANSWER])
    rules = [LowConfidence(below=0.5, then="stop"), NeedsMoreInfo(then="stop")]
    graph = build(model, tools=[calculator()], step_format="structured", step_rules=rules)

    state = graph.invoke(ask())

    assert observations(state) == ["42"]
    assert state["outcome"] == {"status": "answered"}
    assert len(model.calls) == 2


@pytest.mark.parametrize("build", BUILDERS, ids=IDS)
def test_a_malformed_step_is_a_corrective_observation(build: Builder, log: ToolLog) -> None:
    off_range = step("lookup", 7.0, input={"item": "a"})
    unknown_tool = step("shell", input={"command": "rm -rf /"})
    good = step("lookup", input={"item": "b"})
    model = ScriptedChatModel(script=[off_range, unknown_tool, good, ANSWER])
    graph = build(model, tools=[lookup(log)], step_format="structured")

    state = graph.invoke(ask())

    first, second, third = observations(state)
    assert "confidence" in first
    assert "action" in second
    assert third == "lookup done with b"
    assert log.names() == ["lookup"]  # only the good step ran
    assert state["outcome"] == {"status": "answered"}
    turns = [m for m in state["messages"] if isinstance(m, AIMessage)]
    assert all(m.text.strip() for m in turns)  # a server may refuse a turn of calls alone


def test_the_step_schema_refuses_a_tool_the_run_does_not_offer() -> None:
    schema = step_schema([calculator()])
    properties = schema.model_json_schema()["properties"]
    assert properties["action"]["enum"] == ["calculator", "final_answer"]
    assert {"expression"} in [set(s.get("properties", {})) for s in properties["input"]["anyOf"]]
    with pytest.raises(ValueError, match="action"):
        schema.model_validate(step("shell"))
    assert step_schema([calculator()]) is schema  # one class per set of tools: bindings reuse it


@pytest.mark.parametrize("build", BUILDERS, ids=IDS)
def test_a_run_may_choose_the_step_format_within_its_bound(build: Builder) -> None:
    model = ScriptedChatModel(script=[CALCULATE, ANSWER])
    graph = build(model, tools=[calculator()])

    state = graph.invoke(ask(), context={"step_format": "structured"})

    assert observations(state) == ["42"]
    assert model.calls[0].tools == [STEP_SCHEMA]
    with pytest.raises(ValueError, match="step_format"):
        graph.invoke(ask(), context={"step_format": "yaml"})


def test_a_structured_graph_runs_free_steps_when_a_run_asks() -> None:
    model = ScriptedChatModel(script=[tool_call("calculator", expression="6*7"), "42"])
    graph = react.build_graph(model, tools=[calculator()], step_format="structured")

    state = graph.invoke(ask(), context={"step_format": "free"})

    assert observations(state) == ["42"]
    assert model.calls[0].tools == ["calculator"]


def test_step_rules_are_checked_when_made() -> None:
    with pytest.raises(ValueError, match="below"):
        LowConfidence(below=2)
    with pytest.raises(ValueError, match="then"):
        NeedsMoreInfo(then="shrug")  # type: ignore[arg-type]


def test_the_cli_shows_a_typed_steps_confidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from reasoning_graphs.cli import main as cli
    from reasoning_graphs.cli import runs

    unsure = step("calculator", 0.3, input={"expression": "6*7"}, needs_more_info=True)
    model = ScriptedChatModel(script=[unsure, ANSWER])
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    monkeypatch.setenv(cli.DB_ENV, str(tmp_path / "t.sqlite"))

    code = cli.main(["run", "6*7?", "--pattern", "react_text", "--step-format", "structured"])

    out = capsys.readouterr().out
    assert code == 0
    assert "confidence 0.3, needs more info" in out
    assert "Answer: 42" in out


def test_the_cli_refuses_a_step_format_for_a_pattern_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from reasoning_graphs.cli import main as cli

    monkeypatch.setenv(cli.DB_ENV, str(tmp_path / "t.sqlite"))

    code = cli.main(["run", "6*7?", "--pattern", "rewoo", "--step-format", "structured"])

    assert code == 2
    error = capsys.readouterr().err
    assert "--step-format" in error
    assert "rewoo" in error
