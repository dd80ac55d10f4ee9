"""A thread waits only for what is really pending, in the patterns that run a step as a subgraph.

A person rejects a dangerous call; the model proposes it again (answered from the
rejection) and the run is cut short while the model thinks (Ctrl-C). A plan step or a
Reflexion trial is one task of its parent until it ends, so the parent still lists the
answered question. The thread must show no question, ``resume`` must ask none, and a
decision sent for the answered question must not be taken as an answer to anything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.cli import exits, runs
from reasoning_graphs.cli import main as cli
from reasoning_graphs.graphs import plan_execute, plan_react, reflexion
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.plan_react.plan import PlanItems
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import tool_spec
from tests.helpers.cli_driver import run_cli, thread_id_from

PATTERNS = ["plan_execute", "plan_react", "reflexion"]
REJECT = [{"type": "reject", "reason": "not now"}]


class Deploys:
    """The dangerous ``deploy`` tool and the items it deployed."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def deploy(self, item: str) -> str:
        """Deploy an item."""
        self.items.append(item)
        return f"deployed {item}"


def cut_short(_: list[BaseMessage]) -> str:
    raise KeyboardInterrupt  # the person presses Ctrl-C while the model thinks


def graph_for(pattern: str, deploys: Deploys) -> Any:
    """``pattern`` on a model that proposes ``deploy(a)`` twice, then is cut short, then
    gives up; the tool needs a person."""
    calls = [tool_call("deploy", item="a"), tool_call("deploy", item="a"), cut_short, "gave up"]
    tools = [tool_spec(deploys.deploy, name="deploy", dangerous=True)]
    saver = InMemorySaver()
    if pattern == "plan_execute":
        model = ScriptedChatModel(
            script=[Plan(steps=["Deploy a."]), *calls, Replan(response="done")]
        )
        return plan_execute.build_graph(model, tools=tools, checkpointer=saver)
    if pattern == "plan_react":
        model = ScriptedChatModel(script=[PlanItems(items=["Deploy a."]), *calls])
        return plan_react.build_graph(model, tools=tools, checkpointer=saver)
    model = ScriptedChatModel(script=calls)
    passed = lambda task, answer: {"score": 1.0, "feedback": "fine"}  # noqa: E731
    return reflexion.build_graph(model, tools=tools, checkpointer=saver, evaluator=passed)


def interrupted_after_an_answer(pattern: str, deploys: Deploys, thread: dict) -> Any:
    """The graph, its thread cut short after the person answered its only question."""
    graph = graph_for(pattern, deploys)
    (asked,) = graph.invoke({"messages": [HumanMessage("Deploy a.")]}, thread)["__interrupt__"]
    with pytest.raises(KeyboardInterrupt):
        graph.invoke(Command(resume={asked.id: REJECT}), thread)
    return graph, asked


@pytest.mark.parametrize("pattern", PATTERNS)
def test_an_answered_question_is_not_pending_after_a_cut(pattern: str) -> None:
    deploys, thread = Deploys(), {"configurable": {"thread_id": pattern}}
    graph, _ = interrupted_after_an_answer(pattern, deploys, thread)

    state = graph.get_state(thread)

    assert state.interrupts == ()
    assert state.next  # cut short, with its step left to run
    assert all(not task.interrupts for task in state.tasks)
    assert graph.get_state(thread, subgraphs=True).interrupts == ()


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_decision_for_the_answered_question_runs_nothing(pattern: str) -> None:
    deploys, thread = Deploys(), {"configurable": {"thread_id": pattern}}
    graph, asked = interrupted_after_an_answer(pattern, deploys, thread)

    state = graph.invoke(Command(resume={asked.id: ["approve"]}), thread)

    assert not state.get("__interrupt__")
    assert deploys.items == []  # the approval came after the rejection: it answers nothing


@pytest.mark.parametrize("pattern", PATTERNS)
def test_continuing_the_cut_run_asks_nothing_and_runs_nothing(pattern: str) -> None:
    deploys, thread = Deploys(), {"configurable": {"thread_id": pattern}}
    graph, _ = interrupted_after_an_answer(pattern, deploys, thread)

    state = graph.invoke(None, thread)

    assert not state.get("__interrupt__")
    assert deploys.items == []


CLI_PLANS: dict[str, tuple[list[Any], list[Any]]] = {
    "plan_execute": ([Plan(steps=["Write a.txt."])], [Replan(response="done")]),
    "plan_react": ([PlanItems(items=["Write a.txt."])], []),
    "reflexion": ([], [Judgement(feedback="fine", score=1.0)]),  # the model judges
}


@pytest.mark.parametrize("pattern", sorted(CLI_PLANS))
def test_the_command_line_shows_and_asks_only_what_is_pending(
    pattern: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv(cli.DB_ENV, str(tmp_path / "threads.sqlite"))
    write = tool_call("write_file", path="a.txt", content="x")
    before, after = CLI_PLANS[pattern]
    model = ScriptedChatModel(script=[*before, write, write, cut_short, "gave up", *after])
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    workspace = ["--pattern", pattern, "--workspace", str(tmp_path)]

    code, out, _ = run_cli(monkeypatch, capsys, "run", "Write a.txt.", *workspace, stdin="r\n\n")
    thread_id = thread_id_from(out)

    assert code != exits.ANSWERED
    _, listing, _ = run_cli(monkeypatch, capsys, "threads", "--json")
    (entry,) = [json.loads(line) for line in listing.splitlines()]
    assert entry["status"] != "waiting for approval"
    code, out, err = run_cli(monkeypatch, capsys, "resume", thread_id, "--workspace", str(tmp_path))
    assert code == exits.ANSWERED, err
    assert "Decision" not in out + err  # nothing was asked again
    assert not (tmp_path / "a.txt").exists()
