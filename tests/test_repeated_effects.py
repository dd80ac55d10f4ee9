"""An identical call in a world unchanged since it ran is answered from its result;
after a change, or in a new question, it runs again.

A model that loses track writes the same file again and again; under
``--approve-all`` nobody would notice. In every pattern that calls tools, a
stateful or dangerous call identical to one that just ran and succeeded is
answered with that result, exactly as the tool gave it, and not put to a person
again; across plan steps, trials and replanning rounds too. But a correct run
reads again after it changed something (list, write, list again), and that read
must run: any stateful call that ran since forgets the earlier results. A repeat
never ends the question by itself.
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
from reasoning_graphs.testing import ScriptedChatModel, tool_call
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
def test_a_repeated_side_effect_runs_once_and_is_asked_about_once(
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

    assert [run["item"] for run in (r["args"] for r in log.runs)] == ["x"]
    assert asked == (1 if dangerous else 0)
    actions = [event for event in state["trajectory"] if event["kind"] == "action"]
    assert [event["decision"] for event in actions][-1] == "reused"
    assert actions[-1]["observation"] == actions[0]["observation"]  # the tool's result


def test_a_new_question_may_run_the_same_call_again(log: ToolLog, thread: dict) -> None:
    script = [tool_call("note", **NOTE), "Noted.", tool_call("note", **NOTE), "Noted again."]
    tools = [sleeping_tool(log, "note", safe=False)]
    graph = react.build_graph(ScriptedChatModel(script=script), tools, InMemorySaver())

    graph.invoke(ask("Note x."), thread)
    graph.invoke(ask("Note x again, please."), thread)

    assert len(log.runs) == 2


def test_rewoo_refuses_a_plan_that_repeats_a_call(log: ToolLog, thread: dict) -> None:
    # ReWOO plans every call up front, so a repeat is caught in the plan itself
    twice = {"steps": [STEP, {**STEP, "var": "E2"}]}
    script = [twice, {"steps": [STEP]}, "Noted."]
    tools = [sleeping_tool(log, "note", safe=False)]
    graph = rewoo.build_graph(ScriptedChatModel(script=script), tools, InMemorySaver())

    state = graph.invoke(ask("Note x twice."), thread)

    assert len(log.runs) == 1
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


def test_a_repeat_in_an_unchanged_world_is_answered_and_the_run_goes_on() -> None:
    folder = Folder()
    script = [
        tool_call("list_files"),
        tool_call("list_files"),  # nothing changed: answered from the first listing
        tool_call("read_file", path="a.txt"),
        tool_call("write_file", path="c.txt", text="A"),
        "Copied a.txt to c.txt.",
    ]
    graph = react.build_graph(ScriptedChatModel(script=script), folder.tools())

    state = graph.invoke(ask("Copy a.txt to c.txt."))

    assert folder.listed == 1
    assert listings(state) == ["a.txt", "a.txt", "A", "wrote c.txt"]
    assert folder.files["c.txt"] == "A"
    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].text == "Copied a.txt to c.txt."


def test_a_write_repeated_after_another_write_runs_again(log: ToolLog) -> None:
    script = [
        tool_call("note", item="x"),
        tool_call("note", item="y"),
        tool_call("note", item="x"),  # the world changed since the first: a new effect
        "Noted x, y and x.",
    ]
    tools = [sleeping_tool(log, "note", safe=False)]
    graph = react.build_graph(ScriptedChatModel(script=script), tools)

    state = graph.invoke(ask("Note x, then y, then x."))

    assert [r["args"]["item"] for r in log.runs] == ["x", "y", "x"]
    assert state["outcome"] == {"status": "answered"}


def test_rounds_made_only_of_repeats_end_the_question_after_the_limit() -> None:
    folder = Folder()
    script = [*[tool_call("list_files") for _ in range(3)], "It holds a.txt."]
    model = ScriptedChatModel(script=script)
    graph = react.build_graph(model, tools=folder.tools())

    state = graph.invoke(ask("List the folder."))

    assert folder.listed == 1
    assert state["outcome"]["status"] == "incomplete"
    assert "list_files()" in state["outcome"]["reason"]
    assert len(model.calls) == 4  # one listing, two rounds of repeats, the closing call
    assert state["messages"][-1].content == "It holds a.txt."  # the closing reply


def test_one_round_of_repeats_between_others_ends_nothing() -> None:
    folder = Folder()
    script = [
        tool_call("list_files"),
        tool_call("list_files"),
        tool_call("read_file", path="a.txt"),
        tool_call("read_file", path="a.txt"),  # a repeat again, after a stateful read ran
        "a.txt holds A.",
    ]
    graph = react.build_graph(
        ScriptedChatModel(script=script), folder.tools(), repeat_round_limit=2
    )

    state = graph.invoke(ask("What does the folder hold?"))

    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].content == "a.txt holds A."
