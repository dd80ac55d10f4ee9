"""A repeated call is a new call: it runs, and a dangerous one is put to the person again.

A tool's world changes without us, and a call that did something once may be
meant to do it again, so in every pattern that calls tools a stateful or
dangerous call identical to one that already ran runs again — across plan
steps, trials and replanning rounds too — and a person decides each dangerous
one. Only a tool declared pure (a function of its arguments alone) has an
identical repeat answered from the earlier result. A repeat never ends the
question by itself; rounds made only of a pure tool's answered repeats do.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs import llm_compiler, plan_execute, react, react_text, reflexion, rewoo
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.nodes.steps.prompts import REPEATS_ANSWERED
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import tool_spec
from tests.helpers.tool_log import ToolLog, sleeping_tool

NOTE = {"item": "x"}
TASK = {"id": 1, "tool": "note", "args": NOTE, "deps": []}
STEP = {"var": "E1", "tool": "note", "args": NOTE, "reason": "asked"}

SCRIPTS: dict[str, tuple[Any, list[Any], dict[str, Any]]] = {
    "react": (react, [tool_call("note", **NOTE), tool_call("note", **NOTE), "Noted."], {}),
    "react_text": (
        react_text,
        [
            'Thought: note it\nAction: note\nAction Input: {"item": "x"}',
            'Thought: again\nAction: note\nAction Input: {"item": "x"}',
            "Final Answer: Noted.",
        ],
        {},
    ),
    "plan_execute": (
        plan_execute,
        [
            Plan(steps=["Note x.", "Note x once more."]),
            tool_call("note", **NOTE),
            "Noted.",
            tool_call("note", **NOTE),  # the next step proposes the same call
            "Noted again.",
            Replan(response="Noted."),
        ],
        {},
    ),
    "llm_compiler": (
        llm_compiler,
        [
            {"tasks": [TASK]},
            {"answer": "", "replan": True, "reason": "check"},
            {"tasks": [TASK]},  # the next round plans the same call
            {"answer": "Noted.", "replan": False, "reason": ""},
        ],
        {},
    ),
    "reflexion": (
        reflexion,
        [
            tool_call("note", **NOTE),
            "Noted.",
            Judgement(feedback="Do it properly.", score=0.1),
            {"diagnosis": "x", "advice": "y"},
            tool_call("note", **NOTE),  # the next trial repeats it
            "Noted again.",
            Judgement(feedback="Fine.", score=0.9),
        ],
        {"max_trials": 2},
    ),
}


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


@pytest.mark.parametrize("dangerous", [False, True], ids=["stateful", "dangerous"])
@pytest.mark.parametrize("pattern", list(SCRIPTS))
def test_a_repeated_side_effect_runs_again_and_is_asked_about_again(
    pattern: str, dangerous: bool, log: ToolLog, thread: dict
) -> None:
    module, script, options = SCRIPTS[pattern]
    tools = [sleeping_tool(log, "note", safe=False, dangerous=dangerous)]
    graph = module.build_graph(ScriptedChatModel(script=script), tools, InMemorySaver(), **options)

    asked = 0
    state = graph.invoke(ask("Note x."), thread)
    while state.get("__interrupt__"):  # as --approve-all answers
        asked += 1
        (pending,) = state["__interrupt__"]
        approve = [{"type": "approve"} for _ in pending.value["calls"]]
        state = graph.invoke(Command(resume=approve), thread)

    assert [run["item"] for run in (r["args"] for r in log.runs)] == ["x", "x"]
    assert asked == (2 if dangerous else 0)
    actions = [event for event in state["trajectory"] if event["kind"] == "action"]
    ran = "approved" if dangerous else "auto"
    assert [event["decision"] for event in actions][-2:] == [ran, ran]


def test_a_new_question_may_run_the_same_call_again(log: ToolLog, thread: dict) -> None:
    script = [tool_call("note", **NOTE), "Noted.", tool_call("note", **NOTE), "Noted again."]
    tools = [sleeping_tool(log, "note", safe=False)]
    graph = react.build_graph(ScriptedChatModel(script=script), tools, InMemorySaver())

    graph.invoke(ask("Note x."), thread)
    graph.invoke(ask("Note x again, please."), thread)

    assert len(log.runs) == 2


def test_a_rewoo_plan_that_repeats_a_call_runs_it_twice(log: ToolLog, thread: dict) -> None:
    # ReWOO writes every call up front: a step identical to an earlier one is a call too
    twice = {"steps": [STEP, {**STEP, "var": "E2"}]}
    script = [twice, "Noted twice."]
    tools = [sleeping_tool(log, "note", safe=False)]
    graph = rewoo.build_graph(ScriptedChatModel(script=script), tools, InMemorySaver())

    state = graph.invoke(ask("Note x twice."), thread)

    assert len(log.runs) == 2
    assert state["outcome"] == {"status": "answered"}


class Folder:
    """A folder as plain LangChain tools see it (none marked read-only): list and write."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {"a.txt": "A"}
        self.listed = 0

    def tools(self) -> list[Any]:
        @tool
        def list_files() -> str:
            """List the folder's files."""
            self.listed += 1
            return ", ".join(sorted(self.files))

        @tool
        def write_file(path: str, text: str) -> str:
            """Write a file."""
            self.files[path] = text
            return f"wrote {path}"

        @tool
        def read_file(path: str) -> str:
            """Read a file."""
            return self.files.get(path, "no such file")

        return [list_files, write_file, read_file]


def listings(state: dict[str, Any]) -> list[str]:
    return [m.text for m in state["messages"] if isinstance(m, ToolMessage)]


def test_a_read_after_a_write_runs_again_and_sees_the_change() -> None:
    folder = Folder()
    script = [
        tool_call("list_files"),
        tool_call("write_file", path="b.txt", text="B"),
        tool_call("list_files"),
        "a.txt and b.txt.",
    ]
    graph = react.build_graph(ScriptedChatModel(script=script), folder.tools())

    state = graph.invoke(ask("Add b.txt and list the folder."))

    assert folder.listed == 2
    assert listings(state) == ["a.txt", "wrote b.txt", "a.txt, b.txt"]
    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].text == "a.txt and b.txt."


def test_a_read_repeated_in_an_unchanged_world_runs_again() -> None:
    folder = Folder()
    script = [
        tool_call("list_files"),
        tool_call("list_files"),  # nothing of ours changed, but the folder is not ours alone
        tool_call("read_file", path="a.txt"),
        tool_call("write_file", path="c.txt", text="A"),
        "Copied a.txt to c.txt.",
    ]
    graph = react.build_graph(ScriptedChatModel(script=script), folder.tools())

    state = graph.invoke(ask("Copy a.txt to c.txt."))

    assert folder.listed == 2
    assert listings(state) == ["a.txt", "a.txt", "A", "wrote c.txt"]
    assert folder.files["c.txt"] == "A"
    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].text == "Copied a.txt to c.txt."


def test_a_write_repeated_after_another_write_runs_again(log: ToolLog) -> None:
    script = [
        tool_call("note", item="x"),
        tool_call("note", item="y"),
        tool_call("note", item="x"),
        "Noted x, y and x.",
    ]
    tools = [sleeping_tool(log, "note", safe=False)]
    graph = react.build_graph(ScriptedChatModel(script=script), tools)

    state = graph.invoke(ask("Note x, then y, then x."))

    assert [r["args"]["item"] for r in log.runs] == ["x", "y", "x"]
    assert state["outcome"] == {"status": "answered"}


class Converter:
    """A pure tool (its result depends on its argument alone) that counts its runs."""

    def __init__(self) -> None:
        self.runs = 0

    def spec(self) -> Any:
        def to_fahrenheit(celsius: float) -> str:
            """Convert degrees Celsius to Fahrenheit."""
            self.runs += 1
            return f"{celsius * 9 / 5 + 32:g}"

        return tool_spec(to_fahrenheit, pure=True)


REPEAT = {
    "react": tool_call("to_fahrenheit", celsius=20),
    "react_text": 'Thought: convert\nAction: to_fahrenheit\nAction Input: {"celsius": 20}',
    "structured": {
        "thought": "to_fahrenheit converts it.",
        "action": "to_fahrenheit",
        "input": {"celsius": 20},
        "answer": "",
        "confidence": 0.9,
    },
}
ANSWER = {
    "react": "It is 68 F.",
    "react_text": "Final Answer: It is 68 F.",
    "structured": {
        "thought": "The tool gave it.",
        "action": "final_answer",
        "input": {},
        "answer": "It is 68 F.",
        "confidence": 0.9,
    },
}


def repeating_graph(way: str, script: list[Any], converter: Converter) -> Any:
    model = ScriptedChatModel(script=script)
    if way == "react_text":
        return model, react_text.build_graph(model, tools=[converter.spec()])
    structured = {"step_format": "structured"} if way == "structured" else {}
    return model, react.build_graph(model, tools=[converter.spec()], **structured)


@pytest.mark.parametrize("way", list(REPEAT))
def test_rounds_made_only_of_a_pure_tools_repeats_make_the_next_call_an_answer_turn(
    way: str,
) -> None:
    converter = Converter()
    script = [REPEAT[way]] * 3 + [ANSWER[way]]
    model, graph = repeating_graph(way, script, converter)

    state = graph.invoke(ask("20 C in F?"))

    assert converter.runs == 1
    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].content == "It is 68 F."
    assert len(model.calls) == 4  # one run, two rounds of answered repeats, the answer turn
    last = model.calls[-1]
    assert any(REPEATS_ANSWERED in str(m.content) for m in last.messages)
    assert all(REPEATS_ANSWERED not in str(m.content) for m in model.calls[-2].messages)
    if way == "react":
        assert last.tool_choice == "none"


@pytest.mark.parametrize("way", ["react", "react_text"])
def test_an_answer_turn_that_calls_all_the_same_runs_nothing_and_ends_incomplete(
    way: str,
) -> None:
    converter = Converter()
    wordless = {"react": REPEAT["react"], "react_text": REPEAT["react_text"].split("\n", 1)[1]}
    script = [REPEAT[way]] * 3 + [wordless[way], ANSWER[way]]
    model, graph = repeating_graph(way, script, converter)

    state = graph.invoke(ask("20 C in F?"))

    assert converter.runs == 1
    assert state["outcome"]["status"] == "incomplete"
    assert "to_fahrenheit(celsius=20)" in state["outcome"]["reason"]
    assert len(model.calls) == 5  # the answer turn's call dropped, then the closing call
    assert "It is 68 F." in state["messages"][-1].content


def test_one_round_of_a_pure_tools_repeats_between_others_ends_nothing() -> None:
    converter = Converter()
    script = [
        tool_call("to_fahrenheit", celsius=20),
        tool_call("to_fahrenheit", celsius=20),
        tool_call("to_fahrenheit", celsius=30),
        tool_call("to_fahrenheit", celsius=30),
        "68 F and 86 F.",
    ]
    graph = react.build_graph(
        ScriptedChatModel(script=script), [converter.spec()], repeat_round_limit=2
    )

    state = graph.invoke(ask("20 C and 30 C in F?"))

    assert converter.runs == 2
    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].content == "68 F and 86 F."
