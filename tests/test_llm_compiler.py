"""LLM Compiler on a scripted model: a task graph run as dataflow, then one join."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs.llm_compiler import build_graph
from reasoning_graphs.graphs.llm_compiler.dag import parse_plan_text, plan_problems
from reasoning_graphs.metadata import outcome_of
from reasoning_graphs.review import APPROVAL_KIND
from reasoning_graphs.testing import ScriptedChatModel
from reasoning_graphs.tools.spec import tool_spec
from tests.helpers import HELPERS
from tests.helpers.crash_harness import crash_mid_tool, finished_calls, run_agent
from tests.helpers.tool_log import ToolLog, sleeping_tool
from tests.test_rewoo import NoStructuredOutput, text_of

AGENT = HELPERS / "llm_compiler_agent.py"


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def task(task_id: int, tool: str, deps: list[int] | None = None, **args: Any) -> dict[str, Any]:
    return {"id": task_id, "tool": tool, "args": args, "deps": deps or []}


def plan(*tasks: dict[str, Any]) -> dict[str, Any]:
    return {"tasks": list(tasks)}


def answer(text: str) -> dict[str, Any]:
    return {"answer": text, "replan": False, "reason": ""}


def replan(reason: str) -> dict[str, Any]:
    return {"answer": "", "replan": True, "reason": reason}


def schedules(state: dict[str, Any]) -> list[AIMessage]:
    return [m for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls]


def observations(state: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.name: m for m in state["messages"] if isinstance(m, ToolMessage)}


def run_of(log: ToolLog, name: str) -> dict[str, Any]:
    (found,) = [run for run in log.runs if run["name"] == name]
    return found


def test_a_task_gets_the_results_it_refers_to(tools, log) -> None:
    script = [
        plan(
            task(1, "lookup", item="paris"),
            task(2, "lookup", item="rome"),
            task(3, "summarize", item="$1 and ${2}"),
        ),
        answer("Both, summarized."),
    ]
    model = ScriptedChatModel(script=script)

    state = build_graph(model, tools=tools).invoke(ask("Paris and Rome?"))

    assert len(model.calls) == 2  # one plan, one join: no model call per tool
    assert run_of(log, "summarize")["args"]["item"] == (
        "lookup done with paris and lookup done with rome"
    )
    assert state["messages"][-1].content == "Both, summarized."
    assert state["outcome"] == {"status": "answered"}
    assert state["plan"][2]["deps"] == [1, 2]  # references imply deps
    (record,) = schedules(state)
    assert record.response_metadata["runtime"] == "llm_compiler"
    assert [call["id"].split("-")[0] for call in record.tool_calls] == ["t1", "t2", "t3"]
    assert record.tool_calls[2]["args"]["item"].startswith("lookup done with paris")
    assert "summarize done with lookup done with paris" in text_of(model.prompts[1])
    actions = [e for e in state["trajectory"] if e["kind"] == "action"]
    assert all(e["started"] <= e["ended"] for e in actions)


def test_tasks_start_when_their_own_deps_are_done_not_by_level(log) -> None:
    tools = [sleeping_tool(log, "slow", 0.6, safe=True), sleeping_tool(log, "fast", 0.1, safe=True)]
    steps = [task(1, "slow", item="a"), task(2, "fast", item="b"), task(3, "fast", item="$2")]
    graph = build_graph(ScriptedChatModel(script=[plan(*steps), answer("ok")]), tools=tools)

    graph.invoke(ask("go"))

    slow = run_of(log, "slow")
    (dependent,) = [r for r in log.runs if r["args"]["item"] == "fast done with b"]
    assert dependent["start"] < slow["end"]  # level-by-level would wait for the slow task


def test_independent_read_only_tasks_overlap(log) -> None:
    tools = [sleeping_tool(log, "lookup", 0.3, safe=True)]
    steps = [task(i, "lookup", item=str(i)) for i in (1, 2, 3)]
    graph = build_graph(ScriptedChatModel(script=[plan(*steps), answer("ok")]), tools=tools)

    graph.invoke(ask("three lookups"))

    assert len(log.runs) == 3
    assert max(r["start"] for r in log.runs) < min(r["end"] for r in log.runs)


def test_stateful_tasks_keep_plan_order(log) -> None:
    tools = [sleeping_tool(log, "write", 0.2, safe=False), sleeping_tool(log, "move", safe=False)]
    steps = [task(1, "write", item="a"), task(2, "move", item="a")]
    graph = build_graph(ScriptedChatModel(script=[plan(*steps), answer("ok")]), tools=tools)

    graph.invoke(ask("write then move"))

    write, move = run_of(log, "write"), run_of(log, "move")
    assert write["end"] <= move["start"]


BAD_PLANS = {
    "unknown tool": (plan(task(1, "teleport", item="x")), "not an available tool"),
    "missing dep": (plan(task(1, "lookup", deps=[7], item="x")), "does not define"),
    "missing reference": (plan(task(1, "lookup", item="$9")), "does not define"),
    "duplicate id": (plan(task(1, "lookup", item="a"), task(1, "lookup", item="b")), "own id"),
    "cycle": (
        plan(task(1, "lookup", item="$2"), task(2, "summarize", item="$1")),
        "in a circle",
    ),
}


@pytest.mark.parametrize("case", list(BAD_PLANS))
def test_an_invalid_plan_is_made_again_once_then_explained(case, tools, log) -> None:
    bad, problem = BAD_PLANS[case]
    model = ScriptedChatModel(script=[bad, bad, "I could not check this with tools."])

    state = build_graph(model, tools=tools).invoke(ask("question"))

    assert log.runs == []  # nothing ran
    assert len(model.calls) == 3
    assert problem not in text_of(model.prompts[0])
    assert problem in text_of(model.prompts[1])  # the second plan call is told what was wrong
    assert "No tool was run" in text_of(model.prompts[2])
    assert state["outcome"]["status"] == "incomplete"
    assert problem in state["outcome"]["reason"]
    assert state["messages"][-1].content.startswith("I could not check this with tools.")


def test_a_corrected_plan_runs(tools, log) -> None:
    bad, _ = BAD_PLANS["cycle"]
    model = ScriptedChatModel(script=[bad, plan(task(1, "lookup", item="x")), answer("found")])

    state = build_graph(model, tools=tools).invoke(ask("question"))

    assert log.names() == ["lookup"]
    assert state["outcome"] == {"status": "answered"}


def test_replanning_is_bounded(tools, log) -> None:
    model = ScriptedChatModel(
        script=[
            plan(task(1, "lookup", item="a")),
            replan("need b"),
            plan(task(1, "lookup", item="b")),
            replan("need c"),
            "Probably a and b.",
        ]
    )

    state = build_graph(model, tools=tools, max_rounds=2).invoke(ask("a, b, c?"))

    assert [run["args"]["item"] for run in log.runs] == ["a", "b"]
    assert len(model.calls) == 5  # two rounds of plan + join, then finish
    second_planner = text_of(model.prompts[2])
    assert "need b" in second_planner
    assert "lookup done with a" in second_planner  # the replanner sees round 1's results
    assert state["outcome"]["status"] == "incomplete"
    assert "need c" in state["outcome"]["reason"]
    final = state["messages"][-1]
    assert final.content == "Probably a and b."  # the model's own words
    assert "lookup(item='b') returned lookup done with b" in outcome_of(final)["note"]


def test_text_plans_in_the_paper_format_are_read(tools, log) -> None:
    def text(city: str) -> str:
        return f'Thought: two.\n1. lookup("{city}")\n2. summarize(item="about $1")\n3. join()'

    script = [text("paris"), "Replan: more detail", text("rome"), "Paris."]
    model = NoStructuredOutput(script=script)

    state = build_graph(model, tools=tools).invoke(ask("Paris?"))

    assert [run["args"]["item"] for run in log.runs] == [
        "paris",
        "about lookup done with paris",
        "rome",
        "about lookup done with rome",
    ]
    assert "1. <tool>(" in text_of(model.prompts[0])
    assert state["messages"][-1].content == "Paris."


def test_plan_parsing_and_checks(tools) -> None:
    specs = [tool_spec(t) for t in tools]
    tasks, problems = parse_plan_text("1. lookup(item='x')\n2. lookup(x y)\njoin()", specs)
    assert [t["args"] for t in tasks] == [{"item": "x"}, {}]
    assert "cannot read the arguments" in problems[0]
    assert any("depends on its own" in p for p in plan_problems([_task(1, "$1")], ["lookup"], 8))
    many = [_task(i, str(i)) for i in range(1, 4)]
    assert any("at most 2" in p for p in plan_problems(many, ["lookup"], 2))


def _task(task_id: int, item: str) -> Any:
    return {"id": task_id, "tool": "lookup", "args": {"item": item}, "deps": [], "call_id": ""}


def test_a_rejected_task_never_runs_and_its_dependents_are_skipped(tools, log, thread) -> None:
    steps = [
        task(1, "lookup", item="prod"),
        task(2, "deploy", item="$1"),
        task(3, "summarize", item="after $2"),
    ]
    model = ScriptedChatModel(script=[plan(*steps), answer("Not deployed.")])
    graph = build_graph(model, tools=tools, checkpointer=InMemorySaver())

    state = graph.invoke(ask("deploy"), thread)

    (interrupt,) = state["__interrupt__"]
    assert interrupt.value["kind"] == APPROVAL_KIND
    (call,) = interrupt.value["calls"]
    # asked once its input is known, with the result substituted: what runs is what is shown
    assert (call["name"], call["args"]) == ("deploy", {"item": "lookup done with prod"})
    assert log.names() == ["lookup"]

    state = graph.invoke(Command(resume=[{"type": "reject", "reason": "change freeze"}]), thread)

    assert log.names() == ["lookup"]
    found = observations(state)
    assert "change freeze" in found["deploy"].content
    assert "needs the result of $2" in found["summarize"].content
    assert "change freeze" in text_of(model.prompts[-1])
    assert state["rejected"]
    skipped = [e["tool"] for e in state["trajectory"] if e.get("decision") == "skipped"]
    assert skipped == ["summarize"]


def test_an_approved_task_runs(tools, log, thread) -> None:
    steps = [task(1, "lookup", item="prod"), task(2, "deploy", item="$1")]
    graph = build_graph(
        ScriptedChatModel(script=[plan(*steps), answer("Deployed.")]),
        tools=tools,
        checkpointer=InMemorySaver(),
    )

    graph.invoke(ask("deploy"), thread)
    state = graph.invoke(Command(resume=[{"type": "approve"}]), thread)

    assert log.names() == ["lookup", "deploy"]
    assert log.runs[1]["args"] == {"item": "lookup done with prod"}
    assert state["messages"][-1].content == "Deployed."


async def test_async_invoke(log) -> None:
    tools = [sleeping_tool(log, "lookup", 0.2, safe=True), sleeping_tool(log, "fast", safe=True)]
    steps = [task(1, "lookup", item="x"), task(2, "lookup", item="y"), task(3, "fast", item="$1")]
    model = ScriptedChatModel(script=[plan(*steps), answer("both")])

    state = await build_graph(model, tools=tools).ainvoke(ask("two"))

    assert state["messages"][-1].content == "both"
    lookups = [r for r in log.runs if r["name"] == "lookup"]
    assert max(r["start"] for r in lookups) < min(r["end"] for r in lookups)
    assert run_of(log, "fast")["args"] == {"item": "lookup done with x"}


def test_wall_time_against_critical_path(capsys) -> None:
    """Not a timed assertion: prints what the report quotes."""
    log = ToolLog()
    tools = [sleeping_tool(log, "lookup", 1.0, safe=True), sleeping_tool(log, "compare", safe=True)]
    steps = [
        *(task(i, "lookup", item=city) for i, city in enumerate(["a", "b", "c"], start=1)),
        task(4, "compare", item="$1 | $2 | $3"),
    ]
    model = ScriptedChatModel(script=[plan(*steps), answer("c is largest")], delay=0.5)
    started = time.perf_counter()
    state = build_graph(model, tools=tools).invoke(ask("Which is largest?"))
    wall = time.perf_counter() - started
    (record,) = schedules(state)
    meta = record.response_metadata
    with capsys.disabled():
        print(
            f"\n[llm_compiler] run {wall:.2f} s (2 model calls × 0.5 s); schedule "
            f"{meta['wall_ms'] / 1000:.2f} s vs critical path {meta['critical_path_ms'] / 1000:.2f}"
            f" s; sequential tools would take {sum(r['end'] - r['start'] for r in log.runs):.2f} s"
        )
    assert state["messages"][-1].content == "c is largest"


# --- durability: a crash mid-plan does not re-run finished tasks ---------------------------


def test_resume_mid_plan_after_a_crash_does_not_rerun_finished_tasks(tmp_path: Path) -> None:
    db, log = tmp_path / "runs.sqlite", tmp_path / "tools.log"
    thread_id = f"compiler-{uuid.uuid4().hex[:8]}"
    # task 1 finished and its result was saved; task 2, which needs it, is running
    crash_mid_tool(AGENT, db, log, thread_id=thread_id, saved="first done with a")

    result = run_agent(AGENT, str(db), str(log), "resume", THREAD_ID=thread_id, SLOW="0")
    assert result == {"last": "all done", "model_calls": 1}
    finished = finished_calls(log)
    assert finished == ["done first a", "done second first done with a"]
