"""A person is never asked about a call that cannot run, in any pattern that calls tools.

A dangerous call with arguments off its tool's schema (a hostile or confused
model) is answered with the schema error instead of an approval prompt, and
the approval prompt names where a file or shell call acts, as an absolute path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from reasoning_graphs.graphs import llm_compiler, plan_execute, react, react_text, rewoo
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import default_tools
from tests.helpers.tool_log import ToolLog, sleeping_tool

NO_ITEM = {"target": "prod"}  # deploy takes `item`


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


SCRIPTS = {
    "react": (react, [tool_call("deploy", **NO_ITEM), "Could not deploy."]),
    "react_text": (
        react_text,
        [
            # two unknown keys: too far off for the parser's one-argument repair
            'Thought: deploy\nAction: deploy\nAction Input: {"target": "prod", "when": "now"}',
            "Final Answer: Could not deploy.",
        ],
    ),
    "plan_execute": (
        plan_execute,
        [
            Plan(steps=["Deploy to prod."]),
            tool_call("deploy", **NO_ITEM),
            "Could not deploy.",
            Replan(response="Could not deploy."),
        ],
    ),
    "rewoo": (
        rewoo,
        [
            {"steps": [{"var": "E1", "tool": "deploy", "args": NO_ITEM, "reason": "asked"}]},
            "Could not deploy.",
        ],
    ),
    "llm_compiler": (
        llm_compiler,
        [
            {"tasks": [{"id": 1, "tool": "deploy", "args": NO_ITEM, "deps": []}]},
            {"answer": "Could not deploy.", "replan": False, "reason": ""},
        ],
    ),
}


@pytest.mark.parametrize("pattern", list(SCRIPTS))
def test_a_dangerous_call_with_bad_arguments_is_refused_without_asking(
    pattern: str, log: ToolLog, thread: dict
) -> None:
    module, script = SCRIPTS[pattern]
    tools = [sleeping_tool(log, "deploy", safe=False, dangerous=True)]
    graph = module.build_graph(ScriptedChatModel(script=script), tools, InMemorySaver())

    state = graph.invoke(ask("Deploy prod."), thread)

    assert not state.get("__interrupt__"), "nobody is asked about a call that cannot run"
    assert log.runs == []
    (refusal,) = [event for event in state["trajectory"] if event["kind"] == "action"]
    assert (refusal["status"], refusal["decision"]) == ("error", "invalid")
    assert "item" in refusal["observation"]  # the model learns which argument was wrong


@pytest.mark.parametrize(
    ("tool", "args", "where"),
    [
        ("write_file", {"path": "notes/a.txt", "content": "hi"}, "at {ws}/notes/a.txt"),
        ("shell", {"command": "ls"}, "in {ws}"),
    ],
)
def test_the_approval_names_where_the_call_acts(
    tool: str, args: dict, where: str, tmp_path: Path, thread: dict
) -> None:
    model = ScriptedChatModel(script=[tool_call(tool, **args), "Done."])
    graph = react.build_graph(model, default_tools(tmp_path), InMemorySaver())

    state = graph.invoke(ask("Go."), thread)

    (interrupt,) = state["__interrupt__"]
    (call,) = interrupt.value["calls"]
    assert call["description"].endswith(where.format(ws=tmp_path.resolve()))
