"""Plan-and-Execute on a scripted model: steps through ReAct, replanning, bounds, approvals."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs.plan_execute import build_graph
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.metadata import outcome_of
from reasoning_graphs.review import APPROVAL_KIND
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import calculator
from tests.helpers import HELPERS
from tests.helpers.crash_harness import crash_mid_tool, finished_calls, run_agent
from tests.helpers.outcomes import without_note
from tests.helpers.tool_log import ToolLog, sleeping_tool

AGENT = HELPERS / "plan_execute_agent.py"


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def text_of(prompt: list) -> str:
    return "\n".join(str(message.content) for message in prompt)


def calls_for(model: ScriptedChatModel, schema: type) -> list[list]:
    """Prompts of the structured calls that asked for ``schema``."""
    return [call.messages for call in model.calls if call.tools == [schema.__name__]]


ARITHMETIC = [
    Plan(steps=["Compute 23*17.", "Add 4 to the product."]),
    tool_call("calculator", expression="23*17"),
    "23*17 = 391",
    tool_call("calculator", expression="391+4"),
    "391 + 4 = 395",
    Replan(response="23*17+4 = 395."),
]


def test_plans_runs_each_step_through_react_and_answers() -> None:
    model = ScriptedChatModel(script=ARITHMETIC)
    graph = build_graph(model, tools=[calculator()])

    state = graph.invoke(ask("What is 23*17+4?"))

    assert state["messages"][-1].content == "23*17+4 = 395."
    assert state["outcome"] == {"status": "answered"}
    assert [(done["step"], done["result"]) for done in state["past_steps"]] == [
        ("Compute 23*17.", "23*17 = 391"),
        ("Add 4 to the product.", "391 + 4 = 395"),
    ]
    assert state["plan"] == []
    # the steps' tool traffic stays out of the user's conversation, but not out of the record
    assert [type(m) for m in state["messages"]] == [HumanMessage, AIMessage]
    actions = [e for e in state["trajectory"] if e["kind"] == "action"]
    assert [(a["args"]["expression"], a["observation"], a["plan_step"]) for a in actions] == [
        ("23*17", "391", 1),
        ("391+4", "395", 2),
    ]
    # step 2 starts a fresh ReAct conversation that carries step 1's result, not its tool calls
    step_two = model.prompts[3]
    assert "Add 4 to the product." in text_of(step_two)
    assert "23*17 = 391" in text_of(step_two)
    assert not any(isinstance(m, ToolMessage) for m in step_two)
    # the planner saw the tools; the replanner saw every result
    assert "calculator" in text_of(calls_for(model, Plan)[0])
    (replan_prompt,) = calls_for(model, Replan)
    assert "23*17 = 391" in text_of(replan_prompt)
    assert "391 + 4 = 395" in text_of(replan_prompt)


async def test_ainvoke_runs_the_same_plan() -> None:
    graph = build_graph(ScriptedChatModel(script=ARITHMETIC), tools=[calculator()])

    state = await graph.ainvoke(ask("What is 23*17+4?"))

    assert state["messages"][-1].content == "23*17+4 = 395."
    assert len(state["past_steps"]) == 2


def test_replanning_is_bounded_and_ends_with_an_honest_answer() -> None:
    script = [
        Plan(steps=["Look for a."]),
        "found a",
        Replan(steps=["Look for b."]),
        "found b",
        Replan(steps=["Look for c."]),
        "found c",
        Replan(steps=["Look for d."]),  # one revision too many
        "My best guess is abc.",
    ]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=[calculator()], max_replans=2)

    state = graph.invoke(ask("Find everything."))

    assert len(calls_for(model, Replan)) == 3
    assert [done["result"] for done in state["past_steps"]] == ["found a", "found b", "found c"]
    assert without_note(state["outcome"]) == {
        "status": "incomplete",
        "reason": "reached the limit of 2 replans",
    }
    final = state["messages"][-1]
    assert final.content == "My best guess is abc."  # the model's own words
    note = outcome_of(final)["note"]
    assert "reached the limit of 2 replans" in note
    assert "step(task='Look for c.') returned found c" in note
    # the closing request showed the model what the steps found
    assert "found a" in text_of(model.prompts[-1])


def test_the_evidence_alone_answers_when_the_last_call_fails() -> None:
    script = [Plan(steps=["Look for a."]), "found a", Replan(), RuntimeError("model down")]
    graph = build_graph(ScriptedChatModel(script=script), tools=[calculator()])

    state = graph.invoke(ask("Find a."))

    reason = "the replanner gave neither an answer nor further steps"
    assert without_note(state["outcome"]) == {"status": "incomplete", "reason": reason}
    final = state["messages"][-1]
    assert final.content == outcome_of(final)["note"]  # no reply: the note is the answer
    assert "step(task='Look for a.') returned found a" in final.content


def test_an_incomplete_step_sends_the_plan_back_to_the_replanner() -> None:
    script = [
        Plan(steps=["Compute 2+2.", "Double it."]),
        tool_call("calculator", expression="2+"),
        tool_call("calculator", expression="2+"),  # the failed call again: the step stops
        "Probably 4.",  # the step's own honest stop
        Replan(response="4, then 8."),
    ]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=[calculator()])

    state = graph.invoke(ask("What is (2+2)*2?"))

    (done,) = state["past_steps"]
    assert done["outcome"]["status"] == "incomplete"
    assert "again" in done["outcome"]["reason"]
    (replan_prompt,) = calls_for(model, Replan)
    assert "Steps still planned:\n- Double it." in text_of(replan_prompt)
    assert state["messages"][-1].content == "4, then 8."


def test_an_answer_right_after_a_step_that_stopped_short_is_incomplete() -> None:
    script = [
        Plan(steps=["Compute 2+2.", "Double it."]),
        tool_call("calculator", expression="2+"),
        tool_call("calculator", expression="2+"),  # the step stops
        "Probably 4.",
        Replan(response="4, then 8."),
    ]
    model = ScriptedChatModel(script=script)

    state = build_graph(model, tools=[calculator()]).invoke(ask("What is (2+2)*2?"))

    assert state["outcome"]["status"] == "incomplete"
    assert "step 1" in state["outcome"]["reason"]
    final = state["messages"][-1]
    assert final.content == "4, then 8."  # the replanner's words, with no closing call
    assert len(model.calls) == len(script)
    assert "step(task='Compute 2+2.') returned Probably 4." in outcome_of(final)["note"]


def test_a_revision_that_redoes_a_stopped_step_can_answer() -> None:
    script = [
        Plan(steps=["Compute 2+2."]),
        tool_call("calculator", expression="2+"),
        tool_call("calculator", expression="2+"),  # the step stops
        "Probably 4.",
        Replan(steps=["Compute 2+2 with a whole expression."]),
        tool_call("calculator", expression="2+2"),
        "2+2 = 4",
        Replan(response="4"),
    ]

    state = build_graph(ScriptedChatModel(script=script), tools=[calculator()]).invoke(
        ask("What is 2+2?")
    )

    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].content == "4"


def test_an_unreadable_plan_does_the_request_as_one_step() -> None:
    script = [{"not_steps": 1}, "It is 4.", Replan(response="4")]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=[calculator()])

    state = graph.invoke(ask("What is 2+2?"))

    assert [done["step"] for done in state["past_steps"]] == ["What is 2+2?"]
    assert state["messages"][-1].content == "4"


def test_a_follow_up_question_gets_a_fresh_plan(thread: dict[str, Any]) -> None:
    script = [
        Plan(steps=["Compute 2+2."]),
        "4",
        Replan(response="2+2 is 4."),
        Plan(steps=["Compute 4*10."]),
        "40",
        Replan(response="Ten times that is 40."),
    ]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=[calculator()], checkpointer=InMemorySaver())

    graph.invoke(ask("What is 2+2?"), thread)
    state = graph.invoke(ask("And ten times that?"), thread)

    assert state["messages"][-1].content == "Ten times that is 40."
    second_plan = text_of(calls_for(model, Plan)[1])
    assert "2+2 is 4." in second_plan  # the planner reads the conversation
    second_step = text_of(model.prompts[4])
    assert "Compute 4*10." in second_step
    assert "Compute 2+2." not in second_step  # the first question's steps are done with
    assert [done["turn"] for done in state["past_steps"]] == [1, 2]


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_a_dangerous_call_inside_a_step_waits_for_a_person(
    log: ToolLog, thread: dict[str, Any], decision: str
) -> None:
    after_decision = "Deployed." if decision == "approve" else "Not deployed: rejected."
    script = [
        Plan(steps=["Deploy the app to prod.", "Look up the status."]),
        tool_call("deploy", item="prod", id="d1"),
        after_decision,
        tool_call("lookup", item="status"),
        "Status: ok.",
        Replan(response="Finished."),
    ]
    model = ScriptedChatModel(script=script)
    tools = [
        sleeping_tool(log, "deploy", safe=False, dangerous=True),
        sleeping_tool(log, "lookup", safe=True),
    ]
    graph = build_graph(model, tools=tools, checkpointer=InMemorySaver())

    state = graph.invoke(ask("Deploy and check."), thread)

    (interrupt,) = state["__interrupt__"]
    request = interrupt.value
    assert request["kind"] == APPROVAL_KIND
    assert [(c["id"], c["name"], c["args"]) for c in request["calls"]] == [
        ("d1", "deploy", {"item": "prod"})
    ]
    assert set(request["calls"][0]["allowed_decisions"]) == {"approve", "edit", "reject", "respond"}
    assert log.runs == []
    # Studio sees the paused step inside the plan
    (task,) = graph.get_state(thread, subgraphs=True).tasks
    assert (task.name, task.state.next) == ("execute", ("approve",))

    resume = {"type": "reject", "reason": "frozen week"} if decision == "reject" else decision
    state = graph.invoke(Command(resume=[resume]), thread)

    expected = ["deploy", "lookup"] if decision == "approve" else ["lookup"]
    assert log.names() == expected
    assert state["messages"][-1].content == "Finished."
    assert [done["result"] for done in state["past_steps"]] == [after_decision, "Status: ok."]
    # nothing ran twice: one plan, and the script (one reply per call) was used exactly
    assert len(calls_for(model, Plan)) == 1
    assert len(model.calls) == len(script)
    if decision == "reject":
        assert "frozen week" in text_of(model.prompts[2])


# --- a crash mid-plan, resumed in a new process -------------------------------------------


def test_a_crash_mid_plan_resumes_without_redoing_finished_work(tmp_path: Path) -> None:
    db, log = tmp_path / "runs.sqlite", tmp_path / "tools.log"
    thread_id = f"plan-{uuid.uuid4().hex[:8]}"
    # step 1's tool has finished and been saved; step 2's slow tool is running
    crash_mid_tool(AGENT, db, log, thread_id=thread_id, saved="first done with first")

    result = run_agent(AGENT, str(db), str(log), "resume", THREAD_ID=thread_id, SLOW="0")
    assert result == {
        "last": "all done",
        "outcome": {"status": "answered"},
        "steps": ["Run first.", "Run second."],
    }
    finished = finished_calls(log)
    assert finished == ["done first first", "done second second"]
