"""A call with a side effect that already succeeded in the question is not run again unnoticed.

A model that loses track writes the same file again and again; under
``--approve-all`` nobody would notice. In every pattern that calls tools, a
stateful or dangerous call identical to one that ran and succeeded earlier in
the question is answered from that result with a note, and not put to a person
again; across plan steps, trials and replanning rounds too.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs import llm_compiler, plan_execute, react, react_text, reflexion, rewoo
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.nodes.judge import Judgement
from reasoning_graphs.testing import ScriptedChatModel, tool_call

from conftest import ToolLog, sleeping_tool

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
    assert "not run again" in actions[-1]["observation"].lower()


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
