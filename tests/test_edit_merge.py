"""An edit names only what changes: merged over the proposed call, checked before it runs.

A person who edits a proposed call gives the arguments to change; the others
stay as the model proposed them. The merged arguments are checked against the
tool's schema and the run's block rules before anything runs; when they do not
fit, the person (not the model) is asked again with the reason, about the same
call. What runs is exactly the merged arguments the person approved.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel, Field

from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.review import APPROVAL_KIND
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import write_file
from reasoning_graphs.tools.policy import require_arguments
from tests.helpers import HELPERS
from tests.helpers.tool_log import ToolLog, sleeping_tool

SCRIPTED_CLI = HELPERS / "scripted_cli.py"


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def request_of(state: dict[str, Any]) -> dict[str, Any]:
    (interrupt,) = state["__interrupt__"]
    assert interrupt.value["kind"] == APPROVAL_KIND
    return interrupt.value


def edit(**args: Any) -> list[dict[str, Any]]:
    return [{"type": "edit", "args": args}]


def ran_calls(state: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


def proposal(state: dict[str, Any]) -> AIMessage:
    return next(m for m in state["messages"] if isinstance(m, AIMessage) and m.tool_calls)


class Transfer(BaseModel):
    """Move money between accounts."""

    account: str = Field(description="The account to pay.")
    amount: int = Field(description="Whole euros.", gt=0)
    memo: str | None = Field(default=None, description="A note for the payee.")


class Payments:
    """A plain LangChain ``@tool`` with a pydantic schema, and the transfers it made."""

    def __init__(self) -> None:
        self.made: list[dict[str, Any]] = []

        @tool(args_schema=Transfer)
        def transfer(account: str, amount: int, memo: str | None = None) -> str:
            """Move money between accounts."""
            self.made.append({"account": account, "amount": amount, "memo": memo})
            return f"paid {amount} to {account}"

        self.tool = transfer


@pytest.fixture
def payments() -> Payments:
    return Payments()


def payment_graph(payments: Payments, script: list[Any]) -> tuple[Any, ScriptedChatModel]:
    model = ScriptedChatModel(script=script)
    graph = build_graph(
        model, tools=[payments.tool], checkpointer=InMemorySaver(), approve=["transfer"]
    )
    return graph, model


PROPOSED = {"account": "DE-1", "amount": 100, "memo": "rent"}


def test_an_edit_of_one_field_writes_the_proposed_file_with_the_new_content(
    tmp_path: Path, thread: dict
) -> None:
    model = ScriptedChatModel(
        script=[tool_call("write_file", path="hi.txt", content="hi", id="w1"), "Written."]
    )
    graph = build_graph(model, tools=[write_file(tmp_path)], checkpointer=InMemorySaver())
    graph.invoke(ask("Write hi to hi.txt."), thread)

    state = graph.invoke(Command(resume=edit(content="hello")), thread)

    assert (tmp_path / "hi.txt").read_text() == "hello"
    (observation,) = ran_calls(state)
    assert observation.status == "success"
    assert proposal(state).tool_calls[0]["args"] == {"path": "hi.txt", "content": "hi"}
    assert '"content": "hello"' in observation.content  # the model is told what ran
    assert len(model.calls) == 2  # no schema error went back to the model
    assert state["messages"][-1].content == "Written."


def test_a_langchain_tool_runs_exactly_the_merged_arguments(payments: Payments, thread) -> None:
    graph, model = payment_graph(payments, [tool_call("transfer", **PROPOSED, id="t1"), "Paid."])
    graph.invoke(ask("Pay the rent."), thread)

    state = graph.invoke(Command(resume=edit(amount=50)), thread)

    assert payments.made == [{"account": "DE-1", "amount": 50, "memo": "rent"}]
    assert proposal(state).tool_calls[0]["args"] == PROPOSED  # the model's own call stays
    assert proposal(state).tool_calls[0]["id"] == "t1"
    assert ran_calls(state)[0].response_metadata["decision"] == "edited"
    assert len(model.calls) == 2


def test_null_clears_an_argument_whose_schema_allows_it(payments: Payments, thread) -> None:
    graph, _ = payment_graph(payments, [tool_call("transfer", **PROPOSED), "Paid."])
    graph.invoke(ask("Pay the rent."), thread)

    graph.invoke(Command(resume=edit(memo=None)), thread)

    assert payments.made == [{"account": "DE-1", "amount": 100, "memo": None}]


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"amount": "lots"}, "amount"),  # off the schema's type
        ({"amount": -5}, "amount"),  # off the schema's bounds
        ({"account": None}, "account"),  # null where the schema allows none
        ({"iban": "XX"}, "iban"),  # an argument the tool does not take
    ],
    ids=["wrong-type", "out-of-bounds", "null-required", "unknown-argument"],
)
def test_an_edit_that_does_not_fit_asks_the_person_again_and_runs_nothing(
    payments: Payments, thread: dict, changes: dict[str, Any], named: str
) -> None:
    graph, model = payment_graph(payments, [tool_call("transfer", **PROPOSED, id="t1"), "Paid."])
    first = request_of(graph.invoke(ask("Pay the rent."), thread))

    state = graph.invoke(Command(resume=[{"type": "edit", "args": changes}]), thread)

    again = request_of(state)
    assert named in again["error"]
    assert "\n" not in again["error"]
    assert again["calls"] == first["calls"]  # the same call, as proposed
    assert payments.made == []
    assert len(model.calls) == 1  # the model is told nothing
    assert ran_calls(state) == []

    state = graph.invoke(Command(resume=edit(amount=70)), thread)

    assert payments.made == [{"account": "DE-1", "amount": 70, "memo": "rent"}]
    assert state["messages"][-1].content == "Paid."


def test_a_typed_function_tool_merges_and_refuses_alike(thread: dict) -> None:
    sent: list[dict[str, Any]] = []

    @tool
    def send_email(to: str, body: str, cc: list[str] | None = None) -> str:
        """Send an email."""
        sent.append({"to": to, "body": body, "cc": cc})
        return "sent"

    model = ScriptedChatModel(script=[tool_call("send_email", to="a@x.org", body="Hi"), "Sent."])
    graph = build_graph(
        model, tools=[send_email], checkpointer=InMemorySaver(), approve=["send_email"]
    )
    graph.invoke(ask("Email a."), thread)

    state = graph.invoke(Command(resume=edit(cc="b@x.org")), thread)  # a list, not a string
    assert "cc" in request_of(state)["error"]
    assert sent == []

    graph.invoke(Command(resume=edit(cc=["b@x.org"])), thread)
    assert sent == [{"to": "a@x.org", "body": "Hi", "cc": ["b@x.org"]}]


def test_an_edit_into_another_tool_takes_that_tools_own_arguments(
    log: ToolLog, thread: dict
) -> None:
    tools = [
        sleeping_tool(log, "deploy", safe=False, dangerous=True),
        sleeping_tool(log, "lookup", safe=True),
    ]
    graph = build_graph(
        ScriptedChatModel(script=[tool_call("deploy", item="prod"), "done"]),
        tools=tools,
        checkpointer=InMemorySaver(),
    )
    graph.invoke(ask("deploy"), thread)

    renamed = {"type": "edit", "name": "lookup", "args": {"other": "staging"}}
    state = graph.invoke(Command(resume=[renamed]), thread)

    assert "lookup" in request_of(state)["error"]  # its schema, not the proposal's, applies
    assert log.runs == []

    state = graph.invoke(Command(resume=[{**renamed, "args": {"item": "staging"}}]), thread)

    assert [run["name"] for run in log.runs] == ["lookup"]


def test_an_edit_cannot_get_past_a_block_rule(log: ToolLog, thread: dict) -> None:
    model = ScriptedChatModel(script=[tool_call("deploy", item="prod"), "done"])
    graph = build_graph(
        model,
        tools=[sleeping_tool(log, "deploy", safe=False, dangerous=True)],
        checkpointer=InMemorySaver(),
        rules=[require_arguments("deploy", "item")],
    )
    graph.invoke(ask("deploy"), thread)

    state = graph.invoke(Command(resume=edit(item="")), thread)

    assert "item" in request_of(state)["error"]
    assert log.runs == []
    assert len(model.calls) == 1


async def test_the_async_face_merges_and_asks_again_alike(payments: Payments, thread) -> None:
    graph, model = payment_graph(payments, [tool_call("transfer", **PROPOSED), "Paid."])
    await graph.ainvoke(ask("Pay the rent."), thread)

    state = await graph.ainvoke(Command(resume=edit(amount=0)), thread)
    assert "amount" in request_of(state)["error"]

    await graph.ainvoke(Command(resume=edit(amount=1)), thread)
    assert payments.made == [{"account": "DE-1", "amount": 1, "memo": "rent"}]
    assert len(model.calls) == 2


class Terminal:
    """``reasoning-graphs`` in a process of its own with a pseudo-terminal for its stdin,
    stdout and stderr, as a person at a terminal meets it; this side types and reads."""

    def __init__(self, script: list[Any], *argv: str, env: dict[str, str]) -> None:
        self.controller, terminal = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, str(SCRIPTED_CLI), json.dumps(script), *argv],
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            env=env,
            start_new_session=True,
        )
        os.close(terminal)
        self.seen = ""
        self.read_up_to = 0

    def expect(self, text: str, timeout: float = 60.0) -> str:
        """Wait until ``text`` shows after what was expected before; the output up to it."""
        deadline = time.monotonic() + timeout
        while (found := self.seen.find(text, self.read_up_to)) < 0:
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {text!r} in:\n{self.seen[-3000:]}"
            if not select.select([self.controller], [], [], left)[0]:
                continue
            try:
                data = os.read(self.controller, 4096)
            except OSError:  # the process closed its end
                data = b""
            assert data, f"the command ended before {text!r}:\n{self.seen[-3000:]}"
            self.seen += data.decode(errors="replace")
        shown, self.read_up_to = self.seen[self.read_up_to : found], found + len(text)
        return shown

    def type(self, line: str) -> None:
        os.write(self.controller, f"{line}\n".encode())

    def finish(self, timeout: float = 60.0) -> int:
        try:
            while select.select([self.controller], [], [], 0.1)[0]:
                self.seen += os.read(self.controller, 4096).decode(errors="replace")
        except OSError:
            pass
        code = self.process.wait(timeout=timeout)
        os.close(self.controller)
        return code


def test_at_the_terminal_a_bad_edit_is_shown_in_one_line_and_asked_again(tmp_path: Path) -> None:
    script = [{"tool": "write_file", "args": {"path": "hi.txt", "content": "hi"}}, "Written."]
    env = {**os.environ, "REASONING_GRAPHS_DB": str(tmp_path / "threads.sqlite")}
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    terminal = Terminal(script, "run", "Write hi.", "--workspace", str(workspace), env=env)

    terminal.expect("Decision for")
    terminal.type("e")
    terminal.expect('(proposed: {"path": "hi.txt", "content": "hi"})')
    terminal.type('{"contents": "hello"}')  # a misspelt argument
    shown = terminal.expect("Decision for")
    terminal.type("e")
    terminal.expect("proposed:")
    terminal.type('{"content": "hello"}')
    terminal.expect("Written.")

    assert terminal.finish() == 0, terminal.seen[-3000:]
    (unfit,) = [line for line in shown.splitlines() if "did not fit" in line]
    assert "contents" in unfit
    assert (workspace / "hi.txt").read_text() == "hello"
