"""A ``HumanInTheLoopMiddleware`` with ``interrupt_mode="per_call"``: one interrupt per call.

Each gated call of a turn is put to a person on its own, in the model's order and before any
call of the turn runs; the interrupt's value is the call and its ``response_schema`` the
decisions its tool allows. An answer that does not fit raises pydantic's error to its sender
and the question still waits; a decision runs as a batched one does, sealed.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import ValidationError

from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.testing import ScriptedChatModel, tool_calls
from reasoning_graphs.tools.spec import tool_spec

SETTINGS: dict[str, Any] = {
    "send": {"allowed_decisions": ["approve", "edit", "reject"]},
    "wipe": {"allowed_decisions": ["approve", "reject"]},
}


@pytest.fixture
def ran() -> list[str]:
    return []


def graph_of(ran: list[str]) -> Any:
    def send(to: str) -> str:
        """Send a note."""
        ran.append(f"send {to}")
        return f"sent to {to}"

    def wipe(path: str) -> str:
        """Erase a file."""
        ran.append(f"wipe {path}")
        return f"wiped {path}"

    turn = tool_calls(("send", {"to": "ann"}, "c1"), ("wipe", {"path": "x"}, "c2"))
    return build_graph(
        ScriptedChatModel(script=[turn, "done"]),
        tools=[tool_spec(send), tool_spec(wipe)],
        checkpointer=InMemorySaver(),
        middleware=[HumanInTheLoopMiddleware(SETTINGS, interrupt_mode="per_call")],
    )


def test_each_call_waits_on_its_own_and_nothing_runs_meanwhile(ran: list[str]) -> None:
    graph, config = graph_of(ran), {"configurable": {"thread_id": "t"}}

    (first,) = graph.invoke({"messages": [("user", "go")]}, config)["__interrupt__"]
    assert first.value == {
        "type": "tool_approval",
        "tool_call_id": "c1",
        "name": "send",
        "args": {"to": "ann"},
        "description": first.value["description"],
    }
    assert first.response_schema is not None
    edit = {"type": "edit", "edited_action": {"name": "send", "args": {"to": "bob"}}}
    (second,) = graph.invoke(Command(resume={first.id: edit}), config)["__interrupt__"]
    assert (second.value["name"], ran) == ("wipe", [])

    final = graph.invoke(Command(resume={second.id: {"type": "reject"}}), config)

    assert ran == ["send bob"]
    observed = {m.tool_call_id: m for m in final["messages"] if isinstance(m, ToolMessage)}
    assert "Executed instead: send" in str(observed["c1"].content)
    assert observed["c2"].status == "error"


def test_an_answer_off_the_schema_is_refused_and_the_call_still_waits(ran: list[str]) -> None:
    graph, config = graph_of(ran), {"configurable": {"thread_id": "t"}}
    (first,) = graph.invoke({"messages": [("user", "go")]}, config)["__interrupt__"]

    with pytest.raises(ValidationError):
        graph.invoke(Command(resume={first.id: {"type": "respond", "message": "x"}}), config)

    (still,) = graph.get_state(config).interrupts
    assert still.value["tool_call_id"] == "c1"
    assert ran == []
