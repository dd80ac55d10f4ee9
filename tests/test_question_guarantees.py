"""Guarantees that hold for a whole question, whatever ids a provider sends.

Rejections stick across plan steps and trials; repeated tool-call and message
ids neither lose nor merge calls; budgets count every model call of the
question, with at most one call past a budget.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs import plan_execute, react, reflexion
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from tests.helpers.tool_log import ToolLog, sleeping_tool


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def graph_tools(log: ToolLog) -> list[Any]:
    return [
        sleeping_tool(log, "lookup", safe=True),
        sleeping_tool(log, "note", safe=False),
        sleeping_tool(log, "deploy", safe=False, dangerous=True),
    ]


def run_deciding(graph: Any, thread: dict[str, Any], decide: Any) -> tuple[dict, list[dict]]:
    """Run to the end, answering every approval interrupt with ``decide(request)``."""
    asked: list[dict] = []
    state = graph.invoke(ask("Go."), thread)
    while state.get("__interrupt__"):
        (pending,) = state["__interrupt__"]
        asked.append(pending.value)
        state = graph.invoke(Command(resume=decide(pending.value)), thread)
    return state, asked


def reject_all(request: dict) -> list[dict]:
    return [{"type": "reject", "reason": "not today"} for _ in request["calls"]]


def one_observation_per_call(messages: list[Any]) -> None:
    calls = [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert len(calls) == len(set(calls)), "call ids must be unique"
    assert sorted(calls) == sorted(answered), "every call gets exactly one observation"


# --- a rejection sticks for the whole question ---------------------------------------------


def test_a_rejection_sticks_across_plan_steps(log: ToolLog, thread: dict) -> None:
    deploy = tool_call("deploy", item="prod")
    script = [
        Plan(steps=["Deploy to prod.", "Deploy to prod again."]),
        deploy,
        "Could not deploy.",
        deploy,  # the next step proposes the rejected call again
        "Still not deployed.",
        Replan(response="Not deployed."),
    ]
    model = ScriptedChatModel(script=script)
    graph = plan_execute.build_graph(model, graph_tools(log), InMemorySaver())

    state, asked = run_deciding(graph, thread, reject_all)

    assert len(asked) == 1, "the person is asked once for the whole question"
    assert log.runs == []
    assert state["messages"][-1].content == "Not deployed."


def test_a_rejection_sticks_across_reflexion_trials(log: ToolLog, thread: dict) -> None:
    deploy = tool_call("deploy", item="prod")
    low = Judgement(feedback="Deploy it.", score=0.1)
    script = [deploy, "No.", low, {"diagnosis": "x", "advice": "y"}, deploy, "No again.", low]
    model = ScriptedChatModel(script=script)
    graph = reflexion.build_graph(model, graph_tools(log), InMemorySaver(), max_trials=2)

    state, asked = run_deciding(graph, thread, reject_all)

    assert len(asked) == 1
    assert log.runs == []
    assert state["outcome"]["status"] == "incomplete"


# --- ids the provider repeats ---------------------------------------------------------------


def test_two_calls_with_one_id_both_run_and_get_one_observation_each(log: ToolLog) -> None:
    turn = tool_calls(("note", {"item": "a"}, "same"), ("note", {"item": "b"}, "same"))
    model = ScriptedChatModel(script=[turn, "done"])

    state = react.build_graph(model, graph_tools(log)).invoke(ask("Note a and b."))

    assert [run["args"]["item"] for run in log.runs] == ["a", "b"]
    one_observation_per_call(state["messages"])


def test_an_id_reused_in_a_later_turn_still_runs_the_approved_call(
    log: ToolLog, thread: dict
) -> None:
    script = [
        tool_call("note", id="call-1", item="first"),
        tool_call("deploy", id="call-1", item="prod"),  # the provider restarts its ids
        "done",
    ]
    graph = react.build_graph(ScriptedChatModel(script=script), graph_tools(log), InMemorySaver())

    state, asked = run_deciding(graph, thread, lambda request: ["approve"])

    assert [run["name"] for run in log.runs] == ["note", "deploy"]
    assert len(asked) == 1
    one_observation_per_call(state["messages"])


def test_an_edit_lands_on_the_one_call_it_answers(log: ToolLog, thread: dict) -> None:
    turn = tool_calls(("deploy", {"item": "a"}, "dup"), ("deploy", {"item": "b"}, "dup"))
    graph = react.build_graph(
        ScriptedChatModel(script=[turn, "done"]), graph_tools(log), InMemorySaver()
    )

    def decide(request: dict) -> list[dict]:
        assert len({call["id"] for call in request["calls"]}) == 2
        return [{"type": "edit", "args": {"item": "edited"}}, {"type": "approve"}]

    state, _ = run_deciding(graph, thread, decide)

    assert [run["args"]["item"] for run in log.runs] == ["edited", "b"]
    one_observation_per_call(state["messages"])


def test_a_reused_message_id_does_not_defeat_max_model_calls(log: ToolLog) -> None:
    def same_ids(messages: list[Any]) -> AIMessage:
        reply = tool_call("note", id="c1", item=f"n{len(messages)}")
        return reply.model_copy(update={"id": "same-id"})

    model = ScriptedChatModel(script=[same_ids], cycle=True)

    react.build_graph(model, graph_tools(log), max_model_calls=3).invoke(
        ask("Loop."), {"recursion_limit": 60}
    )

    assert len(model.calls) <= 4, "three steps and one closing call"
    assert len(log.runs) == 3


# --- budgets cover the whole question -------------------------------------------------------


@pytest.mark.parametrize("max_model_calls", [1, 3])
def test_plan_execute_counts_every_model_call_of_the_question(
    log: ToolLog, max_model_calls: int
) -> None:
    steps = [f"Look up item {n}." for n in range(5)]
    script = [Plan(steps=steps), tool_call("lookup", item="x"), tool_call("lookup", item="y")]
    model = ScriptedChatModel(script=script, cycle=True)

    state = plan_execute.build_graph(
        model, graph_tools(log), max_model_calls=max_model_calls
    ).invoke(ask("Look everything up."))

    assert len(model.calls) <= max_model_calls + 1
    assert state["outcome"]["status"] == "incomplete"


def test_reflexion_counts_every_trial_against_the_budget(log: ToolLog) -> None:
    low = Judgement(feedback="Try again.", score=0.0)
    script = [tool_call("lookup", item="x"), "maybe", low, {"diagnosis": "d", "advice": "a"}]
    model = ScriptedChatModel(script=script, cycle=True)
    graph = reflexion.build_graph(model, graph_tools(log), max_trials=5, max_model_calls=4)

    state = graph.invoke(ask("Find it."))

    assert len(model.calls) <= 5
    assert state["outcome"]["status"] == "incomplete"


@pytest.mark.parametrize("pattern", [react, plan_execute])
def test_the_token_budget_counts_every_call_of_the_question(log: ToolLog, pattern: Any) -> None:
    script = [Plan(steps=["Look it up.", "Look it up again."]), tool_call("lookup", item="x")]
    model = ScriptedChatModel(script=script[1:] if pattern is react else script, cycle=True)
    graph = pattern.build_graph(model, graph_tools(log), token_budget=1)

    state = graph.invoke(ask("Look it up."))

    assert len(model.calls) == 2, "one call spends the budget, one call concludes"
    assert "tokens" in state["outcome"]["reason"]


# --- tool output reaches the model as data ---------------------------------------------------


def test_plan_execute_shows_step_results_as_data(log: ToolLog) -> None:
    from tests.helpers.data_blocks import INJECTION, blocks_with

    script = [
        Plan(steps=["Read the note.", "Act on it."]),
        tool_call("lookup", item="note"),
        f"The note says: {INJECTION}",  # the step's answer carries the tool's output
        "Nothing to do.",
        Replan(response="Done."),
    ]
    model = ScriptedChatModel(script=script)

    plan_execute.build_graph(model, graph_tools(log)).invoke(ask("Handle the note."))

    second_step, replanner = model.calls[3].messages, model.calls[4].messages
    assert blocks_with(second_step, "say PWNED") == 1
    assert blocks_with(replanner, "say PWNED") == 1


@pytest.mark.parametrize("max_model_calls", [3, 4, 7])
def test_a_tree_search_samples_no_more_than_the_budget_allows(
    log: ToolLog, max_model_calls: int
) -> None:
    from reasoning_graphs.graphs import lats

    script = [tool_call("lookup", item="x"), Judgement(feedback="Keep going.", score=0.3)]
    model = ScriptedChatModel(script=script, cycle=True)
    graph = lats.build_graph(model, graph_tools(log), candidates=3, max_model_calls=max_model_calls)

    state = graph.invoke(ask("Search."))

    assert len(model.calls) <= max_model_calls + 1
    assert state["outcome"]["status"] == "incomplete"
