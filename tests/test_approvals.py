"""Approvals: one interrupt per turn, one decision per dangerous call, nothing runs early."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.review import APPROVAL_KIND
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from reasoning_graphs.tools.policy import require_arguments
from tests.helpers.tool_log import ToolLog, sleeping_tool


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def pending_request(state: dict[str, Any]) -> dict[str, Any]:
    (interrupt,) = state["__interrupt__"]
    assert interrupt.value["kind"] == APPROVAL_KIND
    return interrupt.value


def observations(state: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


@pytest.fixture
def deploy_graph(log: ToolLog):
    """A graph with a dangerous `deploy`, a safe `lookup` and a fixed script."""

    def build(script: list[Any], **options: Any):
        tools = [
            sleeping_tool(log, "deploy", safe=False, dangerous=True),
            sleeping_tool(log, "lookup", safe=True),
        ]
        model = ScriptedChatModel(script=script)
        return build_graph(model, tools=tools, checkpointer=InMemorySaver(), **options), model

    return build


def test_nothing_of_the_turn_runs_before_the_decision(deploy_graph, log, thread) -> None:
    turn = tool_calls(("lookup", {"item": "a"}, "c1"), ("deploy", {"item": "prod"}, "c2"))
    graph, _ = deploy_graph([turn, "done"])

    state = graph.invoke(ask("deploy"), thread)

    request = pending_request(state)
    assert [(c["id"], c["name"], c["args"]) for c in request["calls"]] == [
        ("c2", "deploy", {"item": "prod"})
    ]
    assert set(request["calls"][0]["allowed_decisions"]) == {"approve", "edit", "reject", "respond"}
    assert log.runs == []  # not even the safe lookup of the same turn

    state = graph.invoke(Command(resume=[{"type": "approve"}]), thread)

    assert log.names() == ["lookup", "deploy"]
    assert state["messages"][-1].content == "done"


def test_a_rejected_call_never_runs_and_is_not_asked_again(deploy_graph, log, thread) -> None:
    graph, model = deploy_graph(
        [tool_call("deploy", item="prod"), tool_call("deploy", item="prod"), "gave up"]
    )

    graph.invoke(ask("deploy"), thread)
    state = graph.invoke(Command(resume=[{"type": "reject", "reason": "frozen week"}]), thread)

    assert "__interrupt__" not in state  # the repeat was answered from the earlier decision
    assert log.runs == []
    rejections = [m for m in observations(state).values() if "frozen week" in m.content]
    assert len(rejections) == 2
    assert all(m.response_metadata["decision"] == "rejected" for m in rejections)
    # a repeat alone ends nothing: the model goes on and answers
    assert state["outcome"]["status"] == "answered"
    assert state["messages"][-1].content == "gave up"
    assert any("frozen week" in str(m.content) for m in model.prompts[1])


def test_an_edit_runs_the_persons_arguments_and_tells_the_model(deploy_graph, log, thread) -> None:
    graph, _ = deploy_graph([tool_call("deploy", item="prod", id="c9"), "ok"])

    graph.invoke(ask("deploy"), thread)
    state = graph.invoke(Command(resume=[{"type": "edit", "args": {"item": "staging"}}]), thread)

    assert log.runs[0]["args"] == {"item": "staging"}
    observation = observations(state)["c9"].content
    assert observation.endswith("deploy done with staging")
    assert 'Executed instead: deploy with arguments {"item": "staging"}' in observation
    proposal = next(m for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert proposal.tool_calls[0]["id"] == "c9"
    assert proposal.tool_calls[0]["args"] == {"item": "prod"}  # what the model proposed
    assert len([m for m in state["messages"] if isinstance(m, AIMessage)]) == 2


def test_respond_injects_the_humans_text(deploy_graph, log, thread) -> None:
    graph, model = deploy_graph([tool_call("deploy", item="prod", id="c1"), "ok"])

    graph.invoke(ask("deploy"), thread)
    graph.invoke(Command(resume=[{"type": "respond", "content": "Deployed by hand."}]), thread)

    assert log.runs == []
    last_prompt = model.prompts[1]
    assert isinstance(last_prompt[-1], ToolMessage)
    assert last_prompt[-1].content == "Deployed by hand."
    assert last_prompt[-1].tool_call_id == "c1"


def test_several_dangerous_calls_need_one_decision_each(deploy_graph, log, thread) -> None:
    turn = tool_calls(
        ("deploy", {"item": "a"}, "c1"),
        ("deploy", {"item": "b"}, "c2"),
        ("deploy", {"item": "c"}, "c3"),
    )
    graph, _ = deploy_graph([turn, "done"])

    state = graph.invoke(ask("deploy three"), thread)
    assert [c["id"] for c in pending_request(state)["calls"]] == ["c1", "c2", "c3"]

    decisions = {"c3": "approve", "c1": {"type": "approve"}, "c2": {"type": "reject"}}
    state = graph.invoke(Command(resume=decisions), thread)

    assert [run["args"]["item"] for run in log.runs] == ["a", "c"]
    assert observations(state)["c2"].response_metadata["decision"] == "rejected"


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        ([{"type": "approve"}], ["2", "1"]),
        ([{"type": "approve"}] * 3, ["2", "3"]),
        ([{"type": "maybe"}, {"type": "approve"}], ["maybe"]),
        ([{"type": "edit"}, {"type": "approve"}], ["args"]),
        ({"nope": "approve", "c1": "approve"}, ["nope"]),
    ],
)
def test_a_wrong_answer_is_a_clear_error_and_loses_nothing(
    deploy_graph, log, thread, bad, words
) -> None:
    turn = tool_calls(("deploy", {"item": "a"}, "c1"), ("deploy", {"item": "b"}, "c2"))
    graph, _ = deploy_graph([turn, "done"])
    graph.invoke(ask("deploy two"), thread)

    state = graph.invoke(Command(resume=bad), thread)

    request = pending_request(state)
    assert all(word in request["error"] for word in words)
    assert [c["id"] for c in request["calls"]] == ["c1", "c2"]
    assert log.runs == []

    state = graph.invoke(Command(resume=["approve", "approve"]), thread)
    assert log.names() == ["deploy", "deploy"]
    assert state["messages"][-1].content == "done"


def test_policy_blocks_before_anyone_is_asked(log, thread) -> None:
    def send_email(to: str = "", body: str = "") -> str:
        """Send an email."""
        log.record("send_email", {"to": to}, 0.0)
        return "sent"

    from reasoning_graphs.tools.spec import tool_spec

    turn = tool_calls(
        ("send_email", {"to": "a@example.com"}, "c1"),
        ("shell_out", {"item": "x"}, "c2"),
    )
    tools = [
        tool_spec(send_email, dangerous=True),
        sleeping_tool(log, "shell_out", safe=False, dangerous=True),
    ]
    graph = build_graph(
        ScriptedChatModel(script=[turn, "ok"]),
        tools=tools,
        checkpointer=InMemorySaver(),
        deny=["shell_out"],
        rules=[require_arguments("send_email", "to", "body")],
    )

    state = graph.invoke(ask("email"), thread)

    assert "__interrupt__" not in state
    assert log.runs == []
    seen = observations(state)
    assert "body" in seen["c1"].content
    assert seen["c1"].status == "error"
    assert "shell_out" in seen["c2"].content
    assert {m.response_metadata["decision"] for m in seen.values()} == {"blocked"}


def test_approve_all_policy_asks_for_safe_tools_too(deploy_graph, log, thread) -> None:
    graph, _ = deploy_graph([tool_call("lookup", item="a"), "ok"], approve=["all"])

    state = graph.invoke(ask("look"), thread)

    assert pending_request(state)["calls"][0]["name"] == "lookup"
    assert log.runs == []


def test_run_context_can_require_approval(deploy_graph, log, thread) -> None:
    graph, _ = deploy_graph([tool_call("lookup", item="a"), "ok"])

    state = graph.invoke(ask("look"), thread, context={"approve": ["lookup"]})

    assert pending_request(state)["calls"][0]["name"] == "lookup"


def test_the_request_also_has_the_shape_of_langchains_approval_panel(deploy_graph, thread) -> None:
    turn = tool_calls(("deploy", {"item": "prod"}, "c1"), ("deploy", {"item": "eu"}, "c2"))
    graph, _ = deploy_graph([turn, "done"])

    request = pending_request(graph.invoke(ask("deploy"), thread))

    calls = request["calls"]
    assert request["action_requests"] == [
        {"name": c["name"], "args": c["args"], "description": c["description"]} for c in calls
    ]
    assert request["review_configs"] == [
        {"action_name": "deploy", "allowed_decisions": c["allowed_decisions"]} for c in calls
    ]


def test_a_resume_in_langchains_decision_shape_is_understood(deploy_graph, log, thread) -> None:
    turn = tool_calls(
        ("deploy", {"item": "prod"}, "c1"),
        ("deploy", {"item": "eu"}, "c2"),
        ("deploy", {"item": "us"}, "c3"),
    )
    graph, _ = deploy_graph([turn, "done"])
    graph.invoke(ask("deploy"), thread)

    decisions = [
        {"type": "edit", "edited_action": {"name": "deploy", "args": {"item": "staging"}}},
        {"type": "reject", "message": "not the EU this week"},
        {"type": "respond", "message": "US was deployed by hand."},
    ]
    state = graph.invoke(Command(resume={"decisions": decisions}), thread)

    assert [run["args"] for run in log.runs] == [{"item": "staging"}]
    seen = observations(state)
    assert "not the EU this week" in seen["c2"].content
    assert seen["c3"].content == "US was deployed by hand."
    assert state["messages"][-1].content == "done"


def test_an_edit_into_another_tool_runs_that_tool_in_the_calls_place(
    deploy_graph, log, thread
) -> None:
    graph, _ = deploy_graph([tool_call("deploy", item="prod", id="c1"), "done"])
    graph.invoke(ask("deploy"), thread)

    renamed = {"type": "edit", "edited_action": {"name": "lookup", "args": {"item": "prod"}}}
    state = graph.invoke(Command(resume={"decisions": [renamed]}), thread)

    assert [run["name"] for run in log.runs] == ["lookup"]
    assert "Executed instead: lookup" in observations(state)["c1"].content
    proposal = next(m for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    assert proposal.tool_calls[0]["name"] == "deploy"


def test_an_edit_into_a_tool_the_run_lacks_is_asked_again(deploy_graph, log, thread) -> None:
    graph, _ = deploy_graph([tool_call("deploy", item="prod", id="c1"), "done"])
    graph.invoke(ask("deploy"), thread)

    renamed = {"type": "edit", "edited_action": {"name": "erase", "args": {"item": "prod"}}}
    state = graph.invoke(Command(resume={"decisions": [renamed]}), thread)

    assert "erase" in pending_request(state)["error"]
    assert log.runs == []
