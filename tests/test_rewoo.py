"""ReWOO on a scripted model: one plan, waves of tool calls, one answer."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs.rewoo import build_graph
from reasoning_graphs.graphs.rewoo.steps import parse_plan_text, plan_problems
from reasoning_graphs.metadata import outcome_of
from reasoning_graphs.review import APPROVAL_KIND
from reasoning_graphs.testing import ScriptedChatModel
from reasoning_graphs.tools.spec import tool_spec
from tests.helpers import HELPERS
from tests.helpers.crash_harness import crash_mid_tool, finished_calls, run_agent
from tests.helpers.outcomes import without_note
from tests.helpers.tool_log import sleeping_tool

AGENT = HELPERS / "rewoo_agent.py"


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def step(var: str, tool: str, **args: Any) -> dict[str, Any]:
    return {"var": var, "tool": tool, "args": args, "reason": f"{tool} is needed"}


def plan(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"steps": list(steps)}


def text_of(prompt: list[Any]) -> str:
    return "\n".join(str(message.content) for message in prompt)


def waves(state: dict[str, Any]) -> list[AIMessage]:
    return [m for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls]


def observations(state: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


def test_a_step_gets_the_result_it_refers_to_in_two_model_calls(tools, log) -> None:
    script = [
        plan(step("E1", "lookup", item="paris"), step("E2", "summarize", item="about #E1")),
        "Paris, summarized.",
    ]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=tools)

    state = graph.invoke(ask("Tell me about Paris."))

    assert len(model.calls) == 2  # one plan, one answer: no model call per tool
    assert [(run["name"], run["args"]["item"]) for run in log.runs] == [
        ("lookup", "paris"),
        ("summarize", "about lookup done with paris"),
    ]
    solver_prompt = text_of(model.prompts[1])
    assert "lookup done with paris" in solver_prompt
    assert "summarize done with about lookup done with paris" in solver_prompt
    assert state["messages"][-1].content == "Paris, summarized."
    assert state["outcome"] == {"status": "answered"}
    # the planner saw each tool with its description and argument schema
    planner_prompt = text_of(model.prompts[0])
    assert "Test tool deploy: processes one item." in planner_prompt
    assert '"item"' in planner_prompt
    assert "#E1" in planner_prompt
    # calls are written by the runtime, marked as such, one wave per dependency level
    assert [m.response_metadata["runtime"] for m in waves(state)] == ["rewoo", "rewoo"]
    assert [m.tool_calls[0]["id"].split("-")[0] for m in waves(state)] == ["E1", "E2"]
    kinds = [(e["kind"], e.get("tool")) for e in state["trajectory"]]
    assert kinds == [
        ("thought", None),
        ("action", "lookup"),
        ("action", "summarize"),
        ("thought", None),
    ]


def test_a_wave_that_needs_nothing_settled_goes_straight_to_its_calls(tools, log) -> None:
    steps = [step("E1", "lookup", item="paris"), step("E2", "summarize", item="about #E1")]
    graph = build_graph(ScriptedChatModel(script=[plan(*steps), "done"]), tools=tools)

    nodes = [next(iter(chunk)) for chunk in graph.stream(ask("Tell me about Paris."))]

    assert nodes == ["plan", "work", "act", "work", "act", "work", "solve"]
    assert [run["name"] for run in log.runs] == ["lookup", "summarize"]


def test_a_dangerous_wave_is_still_settled_first(tools, log, thread) -> None:
    graph = build_graph(
        ScriptedChatModel(script=[plan(step("E1", "deploy", item="prod")), "done"]),
        tools=tools,
        checkpointer=InMemorySaver(),
    )

    nodes = [next(iter(chunk)) for chunk in graph.stream(ask("Deploy."), thread)]

    assert nodes[:3] == ["plan", "work", "__interrupt__"]
    assert log.runs == []


def test_independent_steps_run_at_the_same_time(log) -> None:
    tools = [sleeping_tool(log, "lookup", 0.3, safe=True)]
    steps = [step(f"E{i}", "lookup", item=str(i)) for i in (1, 2, 3)]
    graph = build_graph(ScriptedChatModel(script=[plan(*steps), "done"]), tools=tools)

    state = graph.invoke(ask("three lookups"))

    assert len(log.runs) == 3
    assert max(r["start"] for r in log.runs) < min(r["end"] for r in log.runs)
    assert len(waves(state)) == 1


def test_a_wave_never_exceeds_the_per_turn_call_limit(log) -> None:
    tools = [sleeping_tool(log, "lookup", safe=True)]
    steps = [step(f"E{i}", "lookup", item=str(i)) for i in (1, 2, 3)]
    graph = build_graph(
        ScriptedChatModel(script=[plan(*steps), "done"]), tools=tools, max_tool_calls_per_turn=2
    )

    state = graph.invoke(ask("three lookups"))

    assert [len(m.tool_calls) for m in waves(state)] == [2, 1]
    assert all(m.status == "success" for m in observations(state))


class NoStructuredOutput(ScriptedChatModel):
    """A model without tool calling, so without structured output."""

    def with_structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@pytest.mark.parametrize("model_class", [ScriptedChatModel, NoStructuredOutput])
def test_a_plan_written_as_text_is_read(model_class, tools, log) -> None:
    text = (
        "Plan: find the city.\n#E1 = lookup[paris]\n"
        'Plan: summarize it. #E2 = summarize[{"item": "notes on #E1"}]'
    )
    model = model_class(script=[text, "ok"])
    graph = build_graph(model, tools=tools)

    state = graph.invoke(ask("Paris?"))

    assert [run["args"]["item"] for run in log.runs] == ["paris", "notes on lookup done with paris"]
    assert state["plan"][1]["reason"] == "summarize it."
    if model_class is NoStructuredOutput:
        assert "#E1 = <tool>[" in text_of(model.prompts[0])


BAD_PLANS = {
    "unknown tool": (plan(step("E1", "teleport", item="x")), "not an available tool"),
    "undefined variable": (plan(step("E1", "lookup", item="#E7")), "no step defines"),
    "later variable": (
        plan(step("E1", "lookup", item="#E2"), step("E2", "lookup", item="y")),
        "comes later",
    ),
    "cycle": (
        plan(step("E1", "lookup", item="#E2"), step("E2", "summarize", item="#E1")),
        "circle",
    ),
}


@pytest.mark.parametrize("case", list(BAD_PLANS))
def test_an_invalid_plan_is_made_again_once_then_explained(case, tools, log) -> None:
    bad, problem = BAD_PLANS[case]
    model = ScriptedChatModel(script=[bad, bad, "I could not check this with tools."])
    graph = build_graph(model, tools=tools)

    state = graph.invoke(ask("question"))

    assert log.runs == []
    assert len(model.calls) == 3
    assert problem not in text_of(model.prompts[0])
    assert problem in text_of(model.prompts[1])  # the second plan call is told what was wrong
    assert problem in text_of(model.prompts[2])  # and so is the solver
    assert "No tool was run" in text_of(model.prompts[2])
    assert state["outcome"]["status"] == "incomplete"
    assert problem in state["outcome"]["reason"]
    assert state["messages"][-1].content.startswith("I could not check this with tools.")


def test_a_corrected_plan_runs(tools, log) -> None:
    bad, _ = BAD_PLANS["unknown tool"]
    model = ScriptedChatModel(script=[bad, plan(step("E1", "lookup", item="x")), "found"])
    graph = build_graph(model, tools=tools)

    state = graph.invoke(ask("question"))

    assert log.names() == ["lookup"]
    assert state["outcome"] == {"status": "answered"}
    assert state["replans"] == 1
    assert state["plan_problem"] is None


@pytest.mark.parametrize(
    ("steps", "words"),
    [
        ([step("E1", "lookup", item="#E1")], "its own result"),
        ([step("E1", "lookup", item="a"), step("E1", "lookup", item="b")], "more than once"),
        ([step("X", "lookup", item="a")], "E1, E2"),
    ],
)
def test_plan_checks(steps, words) -> None:
    problems = plan_problems(steps, ["lookup"])
    assert any(words in problem for problem in problems), problems


def test_text_plans_tolerate_common_drift(tools) -> None:
    specs = [tool_spec(t) for t in tools]
    text = "Plan 1: look.\n#e1 : lookup['x']\nPlan: use it #E2 = summarize[{item: bad json}]"
    steps, problems = parse_plan_text(text, specs)
    assert [(s["var"], s["tool"], s["args"]) for s in steps] == [
        ("E1", "lookup", {"item": "x"}),
        ("E2", "summarize", {"item": "{item: bad json}"}),
    ]
    assert problems == []
    assert plan_problems(steps, ["lookup", "summarize"]) == []


@pytest.mark.parametrize(
    ("line", "args"),
    [
        ('#E1 = lookup("paris")', {"item": "paris"}),
        ("#E1 = lookup(paris)", {"item": "paris"}),
        ("#E1 = lookup('paris, france')", {"item": "paris, france"}),
        ('#E1 = lookup(item="paris")', {"item": "paris"}),
        ("#E1 = lookup(2*(3+4))", {"item": "2*(3+4)"}),
        ('#E1 = lookup({"item": "paris"})', {"item": "paris"}),
    ],
    ids=["quoted", "bare", "quoted-comma", "keyword", "nested-parens", "json"],
)
def test_text_plans_read_call_syntax(tools, line, args) -> None:
    steps, problems = parse_plan_text(f"Plan: find it. {line}", [tool_spec(t) for t in tools])
    assert [(s["var"], s["tool"], s["args"], s["reason"]) for s in steps] == [
        ("E1", "lookup", args, "find it.")
    ]
    assert problems == []


def test_text_plans_read_several_keyword_arguments() -> None:
    def search(query: str, limit: int = 3) -> str:
        """Search."""
        return query

    steps, problems = parse_plan_text('#E1 = search(query="a, b", limit=2)', [tool_spec(search)])
    assert steps[0]["args"] == {"query": "a, b", "limit": 2}
    assert problems == []


def test_text_plans_in_call_syntax_keep_their_references(tools) -> None:
    text = "Plan: look. #E1 = lookup(paris)\nPlan: use it. #E2 = summarize(#E1)"
    steps, problems = parse_plan_text(text, [tool_spec(t) for t in tools])
    assert [(s["var"], s["tool"], s["args"]) for s in steps] == [
        ("E1", "lookup", {"item": "paris"}),
        ("E2", "summarize", {"item": "#E1"}),
    ]
    assert problems == []
    assert plan_problems(steps, ["lookup", "summarize"]) == []


def test_a_plan_in_call_syntax_runs_with_its_references(tools, log) -> None:
    text = 'Plan: find the city. #E1 = lookup("paris")\nPlan: sum up. #E2 = summarize(#E1)'
    model = ScriptedChatModel(script=[text, "ok"])

    build_graph(model, tools=tools).invoke(ask("Paris?"))

    assert [run["args"]["item"] for run in log.runs] == ["paris", "lookup done with paris"]


@pytest.mark.parametrize(
    "line",
    ['#E1 = lookup("paris"', "Plan: look. #E1 = lookup[paris] and then stop", "#E1 = lookup(x=1)"],
    ids=["unclosed", "trailing-text", "unknown-keyword"],
)
def test_a_malformed_step_line_is_a_plan_problem(tools, line) -> None:
    _steps, problems = parse_plan_text(line, [tool_spec(t) for t in tools])
    assert len(problems) == 1
    assert "#E1" in problems[0]


def test_a_malformed_step_line_makes_the_planner_write_again(tools, log) -> None:
    model = ScriptedChatModel(script=['#E1 = lookup("paris"', "#E1 = lookup(paris)", "ok"])

    state = build_graph(model, tools=tools).invoke(ask("Paris?"))

    assert 'lookup("paris"' in text_of(model.prompts[1])  # the planner is told which line
    assert [run["args"]["item"] for run in log.runs] == ["paris"]
    assert state["outcome"] == {"status": "answered"}


def test_a_dangerous_step_waits_for_approval_and_a_rejection_skips_what_needs_it(
    tools, log, thread
) -> None:
    steps = [
        step("E1", "lookup", item="prod"),
        step("E2", "deploy", item="#E1"),
        step("E3", "summarize", item="after #E2"),
    ]
    model = ScriptedChatModel(script=[plan(*steps), "Not deployed."])
    graph = build_graph(model, tools=tools, checkpointer=InMemorySaver())

    state = graph.invoke(ask("deploy"), thread)

    (interrupt,) = state["__interrupt__"]
    assert interrupt.value["kind"] == APPROVAL_KIND
    (call,) = interrupt.value["calls"]
    assert (call["name"], call["args"]) == ("deploy", {"item": "lookup done with prod"})
    assert log.names() == ["lookup"]

    state = graph.invoke(Command(resume=[{"type": "reject", "reason": "change freeze"}]), thread)

    assert log.names() == ["lookup"]
    solver_prompt = text_of(model.prompts[-1])
    assert "change freeze" in solver_prompt
    assert "needs the result of #E2" in solver_prompt
    assert state["messages"][-1].content == "Not deployed."
    skipped = [e for e in state["trajectory"] if e.get("decision") == "skipped"]
    assert [e["tool"] for e in skipped] == ["summarize"]


def test_an_approved_step_runs(tools, log, thread) -> None:
    steps = [step("E1", "lookup", item="prod"), step("E2", "deploy", item="#E1")]
    graph = build_graph(
        ScriptedChatModel(script=[plan(*steps), "Deployed."]),
        tools=tools,
        checkpointer=InMemorySaver(),
    )

    graph.invoke(ask("deploy"), thread)
    state = graph.invoke(Command(resume=[{"type": "approve"}]), thread)

    assert log.names() == ["lookup", "deploy"]
    assert log.runs[1]["args"] == {"item": "lookup done with prod"}
    assert state["messages"][-1].content == "Deployed."


def test_a_failed_step_skips_its_dependents_but_not_the_rest(log) -> None:
    def broken(item: str) -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    tools = [sleeping_tool(log, "lookup", safe=True), tool_spec(broken)]
    steps = [
        step("E1", "broken", item="a"),
        step("E2", "lookup", item="#E1"),
        step("E3", "lookup", item="b"),
        step("E4", "lookup", item="after #E3"),
    ]
    model = ScriptedChatModel(script=[plan(*steps), "Partly."])
    state = build_graph(model, tools=tools).invoke(ask("go"))

    assert [run["args"]["item"] for run in log.runs] == ["b", "after lookup done with b"]
    assert state["outcome"] == {"status": "answered"}
    skipped = [e["id"] for e in state["trajectory"] if e.get("decision") == "skipped"]
    assert skipped == ["E2-skipped"]  # recorded once, though work ran twice after it
    solver_prompt = text_of(model.prompts[1])
    assert "disk on fire" in solver_prompt
    assert "needs the result of #E1" in solver_prompt


def test_the_step_budget_ends_with_an_honest_answer(tools, log) -> None:
    steps = [
        step("E1", "lookup", item="a"),
        step("E2", "lookup", item="#E1"),
        step("E3", "lookup", item="#E2"),
    ]
    model = ScriptedChatModel(script=[plan(*steps), "Probably a."])
    graph = build_graph(model, tools=tools, max_model_calls=1)

    state = graph.invoke(ask("chain"))

    assert len(log.runs) == 1  # the plan spent the one model call; no wave after the first
    assert len(model.calls) == 2  # plus the one closing call past the budget
    assert without_note(state["outcome"]) == {
        "status": "incomplete",
        "reason": "reached the limit of 1 model calls",
    }
    final = state["messages"][-1]
    assert final.content == "Probably a."  # the model's own words
    assert "lookup(item='a') returned lookup done with a" in outcome_of(final)["note"]
    last_prompt = text_of(model.prompts[-1])
    assert "Not run: the run stopped before this step." in last_prompt
    assert "Stop using tools now" in last_prompt


def test_a_follow_up_question_gets_its_own_plan(tools, log, thread) -> None:
    model = ScriptedChatModel(
        script=[
            plan(step("E1", "lookup", item="a")),
            "First answer.",
            plan(step("E1", "lookup", item="b")),
            "Second answer.",
        ]
    )
    graph = build_graph(model, tools=tools, checkpointer=InMemorySaver())

    graph.invoke(ask("first?"), thread)
    state = graph.invoke(ask("second?"), thread)

    assert [run["args"]["item"] for run in log.runs] == ["a", "b"]
    assert state["messages"][-1].content == "Second answer."
    second_planner = model.prompts[2]
    assert [m.content for m in second_planner[1:]] == ["first?", "First answer.", "second?"]
    assert "lookup done with a" not in text_of(model.prompts[3])


async def test_async_invoke(log) -> None:
    tools = [sleeping_tool(log, "lookup", 0.2, safe=True)]
    steps = [step("E1", "lookup", item="x"), step("E2", "lookup", item="y")]
    model = ScriptedChatModel(script=[plan(*steps), "both"])

    state = await build_graph(model, tools=tools).ainvoke(ask("two"))

    assert state["messages"][-1].content == "both"
    assert max(r["start"] for r in log.runs) < min(r["end"] for r in log.runs)
    assert len(model.calls) == 2


# --- durability: a crash mid-plan does not re-run finished steps ---------------------------


def test_resume_mid_plan_after_a_crash_does_not_rerun_finished_steps(tmp_path: Path) -> None:
    db, log = tmp_path / "runs.sqlite", tmp_path / "tools.log"
    thread_id = f"rewoo-{uuid.uuid4().hex[:8]}"
    # #E1 finished and was saved; #E2, which needs it, is running
    crash_mid_tool(AGENT, db, log, thread_id=thread_id, saved="first done with a")

    result = run_agent(AGENT, str(db), str(log), "resume", THREAD_ID=thread_id, SLOW="0")
    assert result == {"last": "all done", "model_calls": 1}
    finished = finished_calls(log)
    assert finished == ["done first a", "done second first done with a"]
