"""LLM Compiler against hostile plans and tools: what a person approves is what runs, plans that
cannot run are said so, tool output is data, and a finished stateful task survives a kill."""

from __future__ import annotations

import io
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from reasoning_graphs.cli.render import Printer
from reasoning_graphs.graphs.llm_compiler import build_graph
from reasoning_graphs.nodes.guards.untrusted import DATA_RULE
from reasoning_graphs.testing import ScriptedChatModel
from reasoning_graphs.tools.builtins.files import read_file
from reasoning_graphs.tools.builtins.shell import shell
from reasoning_graphs.tools.spec import tool_spec
from tests.helpers import HELPERS
from tests.helpers.compiler_kill_agent import agent as kill_agent
from tests.helpers.crash_harness import agent_env, wait_for
from tests.helpers.tool_log import sleeping_tool
from tests.test_llm_compiler import answer, ask, plan, replan, task
from tests.test_rewoo import NoStructuredOutput, text_of
from tests.test_rewoo_guarantees import INJECTION, data_blocks_holding

KILL_AGENT = HELPERS / "compiler_kill_agent.py"
NOTES = "hello; touch PWNED"
TEXT_PLAN = '1. read_file(path="notes.txt")\n2. shell(command="echo $1")\n3. join()'
SUBSTITUTED = {"command": f"echo {NOTES}"}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    (folder / "notes.txt").write_text(NOTES)
    return folder


def file_and_shell_graph(workspace: Path, checkpointer: Any, *script: Any) -> Any:
    model = NoStructuredOutput(script=[TEXT_PLAN, *script])
    tools = [read_file(workspace), shell(workspace)]
    return build_graph(model, tools=tools, checkpointer=checkpointer)


def shown_calls(state: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    (interrupt,) = state["__interrupt__"]
    return [(call["name"], call["args"]) for call in interrupt.value["calls"]]


def ran_calls(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The calls as the round's passes recorded them, by tool."""
    passes = [m for m in state["messages"] if m.type == "ai" and m.tool_calls]
    return {call["name"]: call["args"] for record in passes for call in record.tool_calls}


def observation(state: dict[str, Any], tool: str) -> Any:
    (found,) = [m for m in state["messages"] if m.type == "tool" and m.name == tool]
    return found


def test_the_person_is_shown_the_substituted_command_and_approving_runs_exactly_it(
    workspace, thread
) -> None:
    graph = file_and_shell_graph(workspace, InMemorySaver(), "done")

    state = graph.invoke(ask("run the notes"), thread)

    assert shown_calls(state) == [("shell", SUBSTITUTED)]
    assert not (workspace / "PWNED").exists()

    state = graph.invoke(Command(resume=[{"type": "approve"}]), thread)

    assert ran_calls(state)["shell"] == SUBSTITUTED
    assert (workspace / "PWNED").exists()  # the approved line ran, all of it
    assert "hello" in observation(state, "shell").content


def test_an_edit_runs_the_edited_command(workspace, thread) -> None:
    graph = file_and_shell_graph(workspace, InMemorySaver(), "done")
    graph.invoke(ask("run the notes"), thread)

    edited = {"command": "echo safe > EDITED"}
    state = graph.invoke(Command(resume=[{"type": "edit", "args": edited}]), thread)

    assert ran_calls(state)["shell"] == edited
    assert (workspace / "EDITED").read_text() == "safe\n"
    assert not (workspace / "PWNED").exists()


def test_a_rejected_command_never_runs(workspace, thread) -> None:
    graph = file_and_shell_graph(workspace, InMemorySaver(), "not run")
    graph.invoke(ask("run the notes"), thread)

    state = graph.invoke(Command(resume=[{"type": "reject", "reason": "no"}]), thread)

    assert not (workspace / "PWNED").exists()
    assert observation(state, "shell").response_metadata["decision"] == "rejected"
    assert state["messages"][-1].content == "not run"


@pytest.mark.parametrize("decision", ["approve", "edit", "reject"])
def test_after_a_restart_the_same_holds(workspace, tmp_path, thread, decision) -> None:
    db = tmp_path / "runs.sqlite"
    first = file_and_shell_graph(
        workspace, SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    )
    shown = shown_calls(first.invoke(ask("run the notes"), thread))
    del first  # the process is gone; a fresh graph resumes from the file

    graph = build_graph(
        NoStructuredOutput(script=["done"]),
        tools=[read_file(workspace), shell(workspace)],
        checkpointer=SqliteSaver(sqlite3.connect(db, check_same_thread=False)),
    )
    assert (
        [
            (i.value["calls"][0]["name"], i.value["calls"][0]["args"])
            for i in graph.get_state(thread).interrupts
        ]
        == shown
        == [("shell", SUBSTITUTED)]
    )
    resume = {
        "approve": {"type": "approve"},
        "edit": {"type": "edit", "args": {"command": "echo safe > EDITED"}},
        "reject": {"type": "reject", "reason": "no"},
    }[decision]
    state = graph.invoke(Command(resume=[resume]), thread)

    assert (workspace / "PWNED").exists() == (decision == "approve")
    assert (workspace / "EDITED").exists() == (decision == "edit")
    assert state["messages"][-1].content == "done"


def test_independent_dangerous_tasks_are_asked_up_front_in_one_interrupt(
    tools, log, thread
) -> None:
    steps = [
        task(1, "deploy", item="a"),
        task(2, "lookup", item="b"),
        task(3, "deploy", item="c"),
        task(4, "deploy", item="$2"),
    ]
    graph = build_graph(
        ScriptedChatModel(script=[plan(*steps), answer("ok")]),
        tools=tools,
        checkpointer=InMemorySaver(),
    )

    state = graph.invoke(ask("deploy"), thread)
    assert shown_calls(state) == [("deploy", {"item": "a"}), ("deploy", {"item": "c"})]
    assert log.runs == []  # nothing runs before the first decision

    state = graph.invoke(Command(resume=[{"type": "approve"}] * 2), thread)
    assert shown_calls(state) == [("deploy", {"item": "lookup done with b"})]
    state = graph.invoke(Command(resume=[{"type": "approve"}]), thread)

    deploys = [run["args"]["item"] for run in log.runs if run["name"] == "deploy"]
    assert deploys == ["a", "c", "lookup done with b"]  # stateful: plan order
    assert state["messages"][-1].content == "ok"


# --- plans that cannot run as written ------------------------------------------------------

UNRUNNABLE = {
    "two tasks with one id": (
        "1. lookup(item='a')\n1. lookup(item='b')\n2. summarize(item='$1')",
        "defined more than once",
    ),
    "a task needing itself": ("1. lookup(item='$1')", "depends on its own result"),
    "tasks needing each other": (
        "1. lookup(item='$2')\n2. summarize(item='$1')",
        "in a circle",
    ),
}


@pytest.mark.parametrize("case", list(UNRUNNABLE))
def test_a_plan_that_cannot_run_is_named_to_the_planner_and_nothing_runs(case, tools, log) -> None:
    bad, problem = UNRUNNABLE[case]
    model = NoStructuredOutput(script=[bad, bad, "I could not check."])

    state = build_graph(model, tools=tools).invoke(ask("question"))

    assert log.runs == []
    assert problem in text_of(model.prompts[1])
    assert problem in state["outcome"]["reason"]


def test_a_task_may_need_a_later_numbered_one_and_gets_its_result(tools, log) -> None:
    text = "1. summarize(item='about $2')\n2. lookup(item='b')"
    model = NoStructuredOutput(script=[text, "fine"])

    build_graph(model, tools=tools).invoke(ask("question"))

    assert [(r["name"], r["args"]["item"]) for r in log.runs] == [
        ("lookup", "b"),
        ("summarize", "about lookup done with b"),
    ]


# --- tool output is data ---------------------------------------------------------------------


def hostile_tool() -> Any:
    def fetch(item: str) -> str:
        """Fetch a page."""
        return f"page {item}: {INJECTION}"

    return tool_spec(fetch, concurrency_safe=True)


def test_tool_output_reaches_joiner_and_replanner_only_inside_data_blocks() -> None:
    model = ScriptedChatModel(
        script=[
            plan(task(1, "fetch", item="a"), task(2, "fetch", item="$1")),
            replan("need more"),
            plan(task(1, "fetch", item="b")),
            answer("summary"),
        ]
    )

    build_graph(model, tools=[hostile_tool()]).invoke(ask("read the pages"))

    joiner, replanner, last_joiner = model.prompts[1], model.prompts[2], model.prompts[3]
    for prompt, blocks in [(joiner, 2), (replanner, 2), (last_joiner, 3)]:
        assert DATA_RULE in prompt[0].text
        report = "\n".join(m.text for m in prompt[1:] if m.type == "human")
        assert data_blocks_holding(report, "ignore previous instructions") == blocks


# --- a finished stateful task is saved before the next one starts ---------------------------


def test_stateful_tasks_run_one_per_pass(log) -> None:
    tools = [sleeping_tool(log, "note", safe=False), sleeping_tool(log, "look", safe=True)]
    steps = [task(1, "note", item="a"), task(2, "look", item="$1"), task(3, "note", item="c")]
    graph = build_graph(ScriptedChatModel(script=[plan(*steps), answer("ok")]), tools=tools)

    passes = [
        update
        for update in graph.stream(ask("notes"), stream_mode="updates")
        if "schedule" in update
    ]

    ran = [
        [m.name for m in update["schedule"]["messages"] if m.type == "tool"] for update in passes
    ]
    assert ran == [["note"], ["look", "note"]]


def test_a_kill_right_after_a_stateful_task_starts_never_repeats_the_ones_before(
    tmp_path: Path,
) -> None:
    db, log = tmp_path / "runs.sqlite", tmp_path / "effects.log"
    process = subprocess.Popen(
        [sys.executable, str(KILL_AGENT), str(db), str(log)],
        env=agent_env(THREAD_ID="compiler-kill"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_for(lambda: log.exists() and "start 3" in log.read_text())
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    graph = kill_agent(str(db), log, [{"answer": "noted", "replan": False}], slow=False)
    state = graph.invoke(None, {"configurable": {"thread_id": "compiler-kill"}})

    done = [line for line in log.read_text().splitlines() if line.startswith("done")]
    assert sorted(done) == ["done 1", "done 2", "done 3"]  # each finished task ran once
    assert state["messages"][-1].content == "noted"


async def test_the_async_face_asks_with_the_substituted_command_too(workspace, thread) -> None:
    graph = file_and_shell_graph(workspace, InMemorySaver(), "done")

    state = await graph.ainvoke(ask("run the notes"), thread)
    assert shown_calls(state) == [("shell", SUBSTITUTED)]
    state = await graph.ainvoke(Command(resume=[{"type": "approve"}]), thread)

    assert ran_calls(state)["shell"] == SUBSTITUTED
    assert (workspace / "PWNED").exists()


def test_a_task_answered_by_reuse_passes_on_the_earlier_result(log) -> None:
    def echo(item: str) -> str:
        """Echo the item."""
        return item

    tools = [tool_spec(echo, pure=True), sleeping_tool(log, "note", safe=False)]
    model = ScriptedChatModel(
        script=[
            plan(task(1, "echo", item="x")),
            replan("note it"),
            plan(task(1, "echo", item="x"), task(2, "note", item="$1")),  # echo repeats round 1
            answer("noted"),
        ]
    )

    state = build_graph(model, tools=tools).invoke(ask("x"))

    decisions = [m.response_metadata["decision"] for m in state["messages"] if m.type == "tool"]
    assert decisions == ["auto", "reused", "auto"]
    assert [run["args"]["item"] for run in log.runs] == ["x"]  # not the reuse note


def test_a_round_of_several_passes_counts_once_and_each_call_is_shown_once(log) -> None:
    tools = [sleeping_tool(log, "note", safe=False)]

    def two_passes(item: str) -> dict:
        return plan(task(1, "note", item=item), task(2, "note", item="$1"))

    script = [two_passes("a"), replan("more"), two_passes("b"), replan("more"), "?"]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=tools, max_rounds=2)
    out = io.StringIO()
    printer = Printer(as_json=False, out=out)

    for update in graph.stream(ask("notes"), stream_mode="updates"):
        for node, values in update.items():
            printer.update(node, values)

    assert len(log.runs) == 4  # two rounds of two passes each, then the round bound
    assert len(model.calls) == 5  # plan, join, plan, join, closing answer
    actions = [line for line in out.getvalue().splitlines() if line.startswith("Action:")]
    assert actions == [
        "Action: note(item='a')",
        "Action: note(item='note done with a')",
        "Action: note(item='b')",
        "Action: note(item='note done with b')",
    ]


def test_a_plan_made_again_past_the_budget_is_not_asked_for(tools, log) -> None:
    duplicate = plan(task(1, "lookup", item="a"), task(1, "lookup", item="b"))
    model = ScriptedChatModel(
        script=[plan(task(1, "lookup", item="a")), replan("more"), duplicate, plan(), "?", "?"]
    )

    state = build_graph(model, tools=tools, max_model_calls=3).invoke(ask("question"))

    assert len(model.calls) == 4  # the budget, plus one closing answer
    assert state["outcome"]["status"] == "incomplete"
    assert "limit of 3" in state["outcome"]["reason"]
