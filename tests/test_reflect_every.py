"""Reflection inside the ReAct loop: ``reflect_every`` and ``reflect_on_failure``.

Scripted models only: each test checks which calls were made, what the reflection
was shown, and what the next ``think`` prompt carried.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.bench.catalog import resolve_suites
from reasoning_graphs.bench.oracle import OracleChatModel
from reasoning_graphs.bench.oracle.reflection import FAILED, SETTLED
from reasoning_graphs.bench.runner import BenchSettings, Cell, pattern_options
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.cli import main as cli
from reasoning_graphs.cli import runs
from reasoning_graphs.context import ReactLoopContext
from reasoning_graphs.graphs import react, react_text
from reasoning_graphs.nodes.steps.reflect import REFLECT, REFLECT_SYSTEM
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import calculator

QUESTION = "What is (6*7)+1?"
FIRST = tool_call("calculator", expression="6*7")
SECOND = tool_call("calculator", expression="42+1")
LOOKED_BACK = "The calculator settled 6*7 = 42; next add 1."


def ask() -> dict[str, Any]:
    return {"messages": [HumanMessage(QUESTION)]}


def nodes_run(graph: CompiledStateGraph, **kwargs: Any) -> tuple[list[str], dict[str, Any]]:
    """The nodes a run passed through, in order, and its final state."""
    names: list[str] = []
    for mode, chunk in graph.stream(ask(), stream_mode=["updates", "values"], **kwargs):
        if mode == "updates":
            names.extend(chunk)
        else:
            state = chunk
    return names, state


def is_reflection(call: list[BaseMessage]) -> bool:
    return call[0].text == REFLECT_SYSTEM


def reflections(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [event for event in state["trajectory"] if event.get("reflection")]


@tool
def lookup(term: str) -> str:
    """Look a term up."""
    raise ValueError(f"the index is down for {term!r}")


def test_off_makes_no_extra_call_and_takes_the_same_steps() -> None:
    plain = ScriptedChatModel(script=[FIRST, SECOND, "43"])
    steps, state = nodes_run(react.build_graph(plain, tools=[calculator()]))
    # on failure only, and nothing fails: the same run
    watched = ScriptedChatModel(script=[FIRST, SECOND, "43"])
    graph = react.build_graph(watched, tools=[calculator()], reflect_on_failure=True)
    watched_steps, watched_state = nodes_run(graph)

    assert steps == ["think", "act", "think", "act", "think"]
    assert watched_steps == steps
    assert len(plain.calls) == len(watched.calls) == 3
    assert not reflections(state)
    assert not reflections(watched_state)


def test_every_n_rounds_the_model_reflects_and_its_next_prompt_shows_it() -> None:
    model = ScriptedChatModel(script=[FIRST, SECOND, LOOKED_BACK, "43"])
    graph = react.build_graph(model, tools=[calculator()], reflect_every=2)
    steps, state = nodes_run(graph)

    assert steps == ["think", "act", "think", "act", REFLECT, "think"]
    reflection = model.calls[2]
    assert is_reflection(reflection.messages)
    assert reflection.tools == []
    shown = reflection.messages[-1].text
    assert QUESTION in shown
    assert "calculator(expression='42+1')" in shown
    assert "43" in shown
    after = model.prompts[3]
    assert isinstance(after[-2], ToolMessage)  # the tool's result stays the tool's
    assert isinstance(after[-1], HumanMessage)
    assert LOOKED_BACK in after[-1].text
    [event] = reflections(state)
    assert event["kind"] == "thought"
    assert event["text"] == LOOKED_BACK
    assert state["messages"][-1].content == "43"
    assert all(LOOKED_BACK not in m.text for m in state["messages"])  # never in the conversation


def test_a_flooding_reflection_is_shown_cut_and_kept_whole() -> None:
    flood = "The next step should change. " * 200
    model = ScriptedChatModel(script=[FIRST, flood, "42"])
    graph = react.build_graph(model, tools=[calculator()], reflect_every=1)

    state = graph.invoke(ask())

    shown = model.prompts[2][-1].text
    assert "The next step should change." in shown
    assert len(shown) < len(flood) / 4
    [event] = reflections(state)
    assert event["text"] == flood
    assert state["messages"][-1].content == "42"


def test_a_failed_call_brings_a_reflection_on_it() -> None:
    model = ScriptedChatModel(
        script=[tool_call("lookup", term="x"), "The lookup failed; work it out instead.", "43"]
    )
    graph = react.build_graph(model, tools=[lookup, calculator()], reflect_on_failure=True)
    steps, state = nodes_run(graph)

    assert steps == ["think", "act", REFLECT, "think"]
    assert "failed" in model.calls[1].messages[-1].text
    assert "index is down" in model.calls[1].messages[-1].text
    assert "work it out instead" in model.prompts[2][-1].text
    assert state["outcome"] == {"status": "answered"}


def test_the_reflection_counts_against_the_model_call_budget() -> None:
    model = ScriptedChatModel(script=[FIRST, "ok", SECOND, "43"])
    graph = react.build_graph(model, tools=[calculator()], reflect_every=1, max_model_calls=3)
    state = graph.invoke(ask())

    # think, reflect, think (the third call): the budget is spent after its round
    assert state["outcome"]["status"] == "incomplete"
    assert "3 model calls" in state["outcome"]["reason"]
    assert len(reflections(state)) == 1
    assert len(model.calls) == 4  # the one closing call past the budget


def test_no_reflection_takes_the_last_model_call_of_the_budget() -> None:
    model = ScriptedChatModel(script=[FIRST, "42"])
    graph = react.build_graph(model, tools=[calculator()], reflect_every=1, max_model_calls=2)
    state = graph.invoke(ask())

    assert state["outcome"] == {"status": "answered"}
    assert not reflections(state)
    assert len(model.calls) == 2


class SlowReflection(ScriptedChatModel):
    """Streams a reply that starts with "slow" over 10 s; others at once."""

    def _latency(self, message: AIMessage) -> float:
        return 10.0 if message.text.startswith("slow") else 0.0


@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_reflection_stopped_by_the_timeout_ends_the_question_honestly(face: str) -> None:
    model = SlowReflection(script=[FIRST, "slow " * 50, "never asked"])
    graph = react.build_graph(model, tools=[calculator()], reflect_every=1, model_timeout=0.3)

    started = time.monotonic()
    state = graph.invoke(ask()) if face == "sync" else asyncio.run(graph.ainvoke(ask()))

    assert time.monotonic() - started < 5
    assert state["outcome"]["status"] == "incomplete"
    assert "0.3 s" in state["outcome"]["reason"]
    assert len(model.calls) == 2  # nothing asked after the stop
    assert any(e.get("stopped") for e in state["trajectory"])


def test_a_run_may_turn_reflection_on_or_make_it_more_frequent_never_off() -> None:
    model = ScriptedChatModel(script=[FIRST, "noted", "42"], cycle=True)
    built_off = react.build_graph(model, tools=[calculator()])
    steps, _ = nodes_run(built_off, context={"reflect_every": 1})
    assert REFLECT in steps

    built_on = react.build_graph(model, tools=[calculator()], reflect_every=1)
    for context in ({"reflect_every": 3}, {"reflect_on_failure": False}):
        steps, _ = nodes_run(built_on, context=context)
        assert REFLECT in steps, context

    studio = built_off.get_context_jsonschema()["properties"]
    assert studio["reflect_every"]["description"]
    assert studio["reflect_on_failure"]["description"]
    with pytest.raises(ValueError, match="reflect_every"):
        ReactLoopContext(reflect_every=0)
    with pytest.raises(ValueError, match="reflect_on_failure"):
        ReactLoopContext(reflect_on_failure="no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reflect_every"):
        react.build_graph(model, tools=[calculator()], reflect_every=0)


def test_react_text_reflects_and_its_next_prompt_shows_it() -> None:
    model = ScriptedChatModel(
        script=[
            'Thought: multiply\nAction: calculator\nAction Input: {"expression": "6*7"}',
            LOOKED_BACK,
            "Thought: done\nFinal Answer: 42",
        ]
    )
    graph = react_text.build_graph(model, tools=[calculator()], reflect_every=1)
    steps, state = nodes_run(graph)

    assert steps == ["think", "act", REFLECT, "think"]
    assert is_reflection(model.prompts[1])
    assert "multiply" in model.prompts[1][-1].text  # the thought that asked
    last = model.prompts[2][-1]
    assert last.text.startswith("Observation")
    assert LOOKED_BACK in last.text
    assert state["messages"][-1].content == "42"


def test_a_correct_run_keeps_its_answer_and_tool_results() -> None:
    def run(**options: Any) -> dict[str, Any]:
        script = [FIRST, SECOND, "43"]
        if options:
            script = [FIRST, "fine", SECOND, "fine", "43"]
        model = ScriptedChatModel(script=script)
        return react.build_graph(model, tools=[calculator()], **options).invoke(ask())

    plain, reflected = run(), run(reflect_every=1, reflect_on_failure=True)

    def results(state: dict[str, Any]) -> list[Any]:
        return [m.content for m in state["messages"] if isinstance(m, ToolMessage)]

    assert results(reflected) == results(plain) == ["42", "43"]
    assert reflected["messages"][-1].content == plain["messages"][-1].content == "43"
    assert reflected["outcome"] == plain["outcome"] == {"status": "answered"}


def test_the_cli_turns_reflection_on_and_shows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = ScriptedChatModel(script=[FIRST, LOOKED_BACK, "42"])
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    monkeypatch.setenv(cli.DB_ENV, str(tmp_path / "t.sqlite"))

    code = cli.main(["run", "6*7?", "--pattern", "react", "--reflect-every", "1"])

    out = capsys.readouterr().out
    assert code == 0
    assert f"Reflection: {LOOKED_BACK}" in out
    assert "Answer: 42" in out


def test_the_cli_refuses_reflection_for_a_pattern_without_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(cli.DB_ENV, str(tmp_path / "t.sqlite"))

    code = cli.main(["run", "6*7?", "--pattern", "rewoo", "--reflect-on-failure"])

    assert code == 2
    assert "--reflect-on-failure" in capsys.readouterr().err


def test_the_oracle_looks_back_at_a_failed_call_and_at_one_that_settled_things() -> None:
    def oracle(tool: str, args: dict[str, str]) -> OracleChatModel:
        gold = {"id": "t", "question": QUESTION, "answer": "43", "tools": [tool],
                "trajectory": [{"tool": tool, "args": args}]}  # fmt: skip
        return OracleChatModel(task=Task.from_json(gold), pattern="react")

    failing = oracle("lookup", {"term": "x"})
    failed = react.build_graph(failing, tools=[lookup], reflect_on_failure=True).invoke(ask())
    settling = oracle("calculator", {"expression": "6*7"})
    settled = react.build_graph(settling, tools=[calculator()], reflect_every=1).invoke(ask())

    assert [e["text"] for e in reflections(failed)] == [FAILED.format(tool="lookup")]
    assert [e["text"] for e in reflections(settled)] == [SETTLED]
    assert settled["messages"][-1].content == "43"


def test_the_bench_passes_reflection_to_the_patterns_it_builds() -> None:
    task = Task.from_json({"id": "t", "question": QUESTION, "answer": "43"})
    cell = Cell(suite=resolve_suites(["chain"])[0], task=task, pattern="react")

    assert "reflect_every" not in pattern_options(cell, BenchSettings())
    options = pattern_options(cell, BenchSettings(reflect_every=2, reflect_on_failure=True))
    assert options["reflect_every"] == 2
    assert options["reflect_on_failure"] is True


def test_a_typed_step_sees_the_reflection_too() -> None:
    def typed(action: str, **fields: Any) -> dict[str, Any]:
        blank = {"input": {}, "answer": "", "thought": f"{action} next.", "confidence": 0.9}
        return {**blank, "action": action, **fields}

    script = [typed("calculator", input={"expression": "6*7"}), LOOKED_BACK]
    model = ScriptedChatModel(script=[*script, typed("final_answer", answer="42")])
    graph = react.build_graph(
        model, tools=[calculator()], step_format="structured", reflect_every=1
    )
    state = graph.invoke(ask())

    assert LOOKED_BACK in model.prompts[2][-1].text
    assert state["messages"][-1].content == "42"
