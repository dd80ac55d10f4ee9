"""Plan-in-context ReAct on a scripted model: the plan in the prompt, marks, rewrites, bounds."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs.plan_react import build_graph
from reasoning_graphs.graphs.plan_react.board import is_plan
from reasoning_graphs.graphs.plan_react.plan import PlanItems
from reasoning_graphs.graphs.react import build_graph as build_react
from reasoning_graphs.nodes.steps.typed_step import STEP_SCHEMA
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from reasoning_graphs.tools.builtins import calculator


@tool
def lookup(key: str) -> str:
    """Look a key up in the office directory."""
    return {"alice": "Alice: room 12"}.get(key.lower(), f"No entry for {key!r}.")


@tool
def delete_note(title: str) -> str:
    """Delete a note."""
    return f"Deleted {title}."


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def think_systems(model: ScriptedChatModel) -> list[str]:
    """The system prompt of every call that could call tools (the loop's ``think``)."""
    return [
        str(call.messages[0].content)
        for call in model.calls
        if "update_plan" in call.tools and isinstance(call.messages[0], SystemMessage)
    ]


def plan_calls(model: ScriptedChatModel) -> list[list]:
    return [call.messages for call in model.calls if call.tools == [PlanItems.__name__]]


def test_the_plan_is_in_every_prompt_and_items_are_marked_done() -> None:
    model = ScriptedChatModel(
        script=[
            PlanItems(items=["Compute 6*7 with the calculator.", "Add 1 to it."]),
            tool_call("calculator", expression="6*7"),
            tool_calls(("update_plan", {"done": [1]}), ("calculator", {"expression": "42+1"})),
            "43",
        ]
    )
    state = build_graph(model, [calculator()]).invoke(ask("What is 6*7+1?"))

    assert state["messages"][-1].content == "43"
    assert state["outcome"] == {"status": "answered"}
    first, _, last = think_systems(model)
    assert "[ ] 1. Compute 6*7 with the calculator." in first
    assert "[ ] 2. Add 1 to it." in first
    assert "[x] 1. Compute 6*7 with the calculator." in last
    assert "[ ] 2. Add 1 to it." in last
    # the model reads the plan in the system prompt, not as a turn of its own
    assert not any(is_plan(m) for call in model.calls[1:] for m in call.messages)
    answers = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert any(m.name == "update_plan" and m.status == "success" for m in answers)


def test_a_correct_run_costs_the_react_calls_plus_the_plan() -> None:
    react_model = ScriptedChatModel(script=[tool_call("calculator", expression="6*7"), "42"])
    react_state = build_react(react_model, [calculator()]).invoke(ask("What is 6*7?"))
    model = ScriptedChatModel(
        script=[
            PlanItems(items=["Compute 6*7."]),
            tool_call("calculator", expression="6*7"),
            "42",
        ]
    )
    state = build_graph(model, [calculator()]).invoke(ask("What is 6*7?"))

    assert state["messages"][-1].content == react_state["messages"][-1].content == "42"
    assert state["outcome"] == react_state["outcome"] == {"status": "answered"}
    assert len(model.calls) == len(react_model.calls) + 1
    assert len(plan_calls(model)) == 1


def test_a_contradicting_observation_rewrites_the_plan_in_place() -> None:
    model = ScriptedChatModel(
        script=[
            PlanItems(items=["Look up bob in the directory."]),
            tool_call("lookup", key="bob"),
            tool_call("update_plan", needs_replan=True, reason="bob is not in the directory"),
            PlanItems(items=["Look up alice instead."]),
            tool_call("lookup", key="alice"),
            "Alice is in room 12.",
        ]
    )
    graph = build_graph(model, [lookup], checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "replan"}}
    steps = [name for chunk in graph.stream(ask("Where is bob?"), thread) for name in chunk]
    state = graph.get_state(thread).values

    assert state["messages"][-1].content == "Alice is in room 12."
    assert (steps.count("plan"), steps.count("replan")) == (1, 1)
    rewrite = "\n".join(str(m.content) for m in plan_calls(model)[1])
    assert "bob is not in the directory" in rewrite
    assert "No entry for 'bob'" in rewrite  # the observation the plan is rewritten from
    after = think_systems(model)[-1]
    assert "[ ] 1. Look up alice instead." in after
    assert "bob in the directory" not in after
    # same thread, one loop: both plans are messages of the one conversation
    assert [m.response_metadata["items"] for m in state["messages"] if is_plan(m)] == [
        ["Look up bob in the directory."],
        ["Look up alice instead."],
    ]


def replan_again(reason: str) -> Any:
    return tool_call("update_plan", needs_replan=True, reason=reason)


def test_rewrites_are_bounded_by_max_replans_and_a_run_may_lower_it() -> None:
    script = [
        PlanItems(items=["Look up bob."]),
        replan_again("first"),
        PlanItems(items=["Look up robert."]),
        replan_again("second"),
        "I could not find bob.",
    ]
    model = ScriptedChatModel(script=script)
    state = build_graph(model, [lookup], max_replans=1).invoke(ask("Where is bob?"))

    assert state["messages"][-1].content == "I could not find bob."
    assert len(plan_calls(model)) == 2
    assert "may not be rewritten again" in think_systems(model)[-1]

    lowered = ScriptedChatModel(script=[script[0], script[1], script[4]])
    build_graph(lowered, [lookup], max_replans=3).invoke(
        ask("Where is bob?"), context={"max_replans": 0}
    )
    assert len(plan_calls(lowered)) == 1
    assert "may not be rewritten again" in think_systems(lowered)[-1]


def test_a_dangerous_tool_still_asks_a_person_and_the_plan_survives_the_resume() -> None:
    saver = InMemorySaver()
    thread = {"configurable": {"thread_id": "approve"}}
    first = ScriptedChatModel(
        script=[
            PlanItems(items=["Delete the note draft."]),
            tool_call("delete_note", title="draft"),
        ]
    )
    paused = build_graph(first, [delete_note], checkpointer=saver, approve=["delete_note"]).invoke(
        ask("Delete my draft note."), thread
    )
    (request,) = paused["__interrupt__"]
    assert [call["name"] for call in request.value["calls"]] == ["delete_note"]

    # a new graph (another process) resumes from the checkpoint alone
    second = ScriptedChatModel(script=[tool_call("update_plan", done=[1]), "Deleted."])
    graph = build_graph(second, [delete_note], checkpointer=saver, approve=["delete_note"])
    state = graph.invoke(Command(resume=["approve"]), thread)

    assert state["messages"][-1].content == "Deleted."
    assert any(m.content == "Deleted draft." for m in state["messages"])
    first_after, last = think_systems(second)
    assert "[ ] 1. Delete the note draft." in first_after
    assert "[x] 1. Delete the note draft." in last


def test_a_malformed_plan_and_bad_update_arguments_are_observations() -> None:
    model = ScriptedChatModel(
        script=[
            "I would rather not plan.",
            tool_call("update_plan", done="first"),
            tool_call("update_plan", done=[7]),
            "Done.",
        ]
    )
    state = build_graph(model, [calculator()]).invoke(ask("What is 2+2?"))

    assert state["messages"][-1].content == "Done."
    (plan,) = [m for m in state["messages"] if is_plan(m)]
    assert plan.response_metadata["items"] == ["What is 2+2?"]  # the request itself
    bad, outside = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert bad.status == "error"
    assert "Not in the plan" in str(outside.content)


def test_a_run_may_write_its_steps_typed_with_the_plan_in_their_prompt() -> None:
    def step(action: str, **fields: Any) -> dict[str, Any]:
        blank = {"input": {}, "answer": "", "thought": f"{action} next.", "confidence": 0.9}
        return {**blank, "action": action, **fields}

    model = ScriptedChatModel(
        script=[
            PlanItems(items=["Compute 6*7 with the calculator."]),
            step("calculator", input={"expression": "6*7"}),
            step("update_plan", input={"done": [1]}),
            step("final_answer", answer="42"),
        ]
    )
    graph = build_graph(model, [calculator()], checkpointer=InMemorySaver())

    state = graph.invoke(
        ask("What is 6*7?"),
        {"configurable": {"thread_id": "typed"}},
        context={"step_format": "structured"},
    )

    assert state["messages"][-1].content == "42"
    assert state["outcome"] == {"status": "answered"}
    typed = [call for call in model.calls if call.tools == [STEP_SCHEMA]]
    assert len(typed) == 3
    assert "[ ] 1. Compute 6*7" in str(typed[0].messages[0].content)
    assert "[x] 1. Compute 6*7" in str(typed[2].messages[0].content)
    thoughts = [e for e in state["trajectory"] if e["kind"] == "thought" and "confidence" in e]
    assert [e["confidence"] for e in thoughts] == [0.9, 0.9, 0.9]


def test_ticking_the_plan_costs_nothing_of_the_tool_budgets() -> None:
    budget = {"max_tool_calls": 2}
    react_model = ScriptedChatModel(
        script=[
            tool_call("calculator", expression="6*7"),
            tool_call("calculator", expression="42+1"),
            "43",
        ]
    )
    react_state = build_react(react_model, [calculator()], **budget).invoke(ask("What is 6*7+1?"))
    model = ScriptedChatModel(
        script=[
            PlanItems(items=["Compute 6*7.", "Add 1."]),
            tool_calls(("calculator", {"expression": "6*7"}), ("update_plan", {"done": [1]})),
            tool_calls(("calculator", {"expression": "42+1"}), ("update_plan", {"done": [2]})),
            "43",
        ]
    )
    state = build_graph(model, [calculator()], **budget).invoke(ask("What is 6*7+1?"))

    for key in ("status", "reason"):  # the note quotes the ticks among the evidence
        assert state["outcome"].get(key) == react_state["outcome"].get(key)
    assert state["messages"][-1].content == react_state["messages"][-1].content == "43"
    assert [m.content for m in state["messages"] if m.name == "calculator"] == ["42", "43"]
    ticks = [m for m in state["messages"] if m.name == "update_plan" and m.status == "success"]
    assert len(ticks) == 2


def test_a_tick_does_not_count_against_the_calls_of_a_turn_but_other_calls_still_do() -> None:
    model = ScriptedChatModel(
        script=[
            PlanItems(items=["Compute 6*7."]),
            tool_calls(
                ("update_plan", {"done": [1]}),
                ("calculator", {"expression": "6*7"}),
                ("calculator", {"expression": "7*6"}),
            ),
            "42",
        ]
    )
    graph = build_graph(model, [calculator()], max_tool_calls_per_turn=1)

    state = graph.invoke(ask("What is 6*7?"))

    answers = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    actions = [e for e in state["trajectory"] if e["kind"] == "action"]
    ran = [(e["tool"], e["args"]) for e in actions if e["decision"] == "auto"]
    assert ran == [("update_plan", {"done": [1]}), ("calculator", {"expression": "6*7"})]
    [skipped] = [e for e in actions if e["decision"] == "skipped"]
    assert skipped["args"] == {"expression": "7*6"}
    assert answers[skipped["id"]].status == "error"
