"""A user's graphs whose tools see a world that changes between calls, for ``--graph``.

Each attribute is a zero-argument factory of a ReAct graph on a scripted model
that makes the same call again and again, for ``reasoning-graphs run --graph
repeat_agents.py:NAME``. The model decides from the prompt: it makes the next
round of calls while it has made fewer than its rounds, then answers with every
result it saw (``Seen: first | second | …``; a refusal is no result).

Every run of a tool appends its name as one line to the log ``$REPEATS_LOG``
names, so a test counts the runs; the log is also the tools' memory of the
world (how far a build has got, what time it is), so what a tool returns
changes from one run to the next, as a real build, clock or inbox would.
``write_file`` appends to a file in the folder ``$REPEATS_FILES`` names.

- ``polling``: ``check_build(build_id="42")`` three times, marked read-only
  (``concurrency_safe``): running, running, passed;
- ``polling_plain``: the same tool as a plain LangChain ``@tool``;
- ``clock``: ``current_time()`` twice: the clock moves;
- ``paging``: ``list_inbox(cursor="c0")`` twice: the inbox fills between reads;
- ``messaging_one_turn`` / ``messaging_two_turns``: ``send_message`` twice with
  the same arguments, in one model turn or in two;
- ``writing``: a dangerous ``write_file`` twice with the same arguments;
- ``converting``: a pure ``to_fahrenheit(celsius=100)`` twice.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.testing import ScriptedChatModel, tool_calls
from reasoning_graphs.tools.spec import tool_spec

LOG_ENV = "REPEATS_LOG"
FILES_ENV = "REPEATS_FILES"
ANSWER = "Seen: "
NOTHING = "no result"
BUILD_STATES = ("running", "running", "passed")
INBOX = ("hello from Ana", "build 42 passed", "lunch at noon")

Call = tuple[str, dict[str, Any]]
POLL: Call = ("check_build", {"build_id": "42"})
READ_CLOCK: Call = ("current_time", {})
READ_INBOX: Call = ("list_inbox", {"cursor": "c0"})
SEND: Call = ("send_message", {"to": "ana", "text": "The build passed."})
WRITE: Call = ("write_file", {"path": "notes.txt", "content": "deployed\n"})
CONVERT: Call = ("to_fahrenheit", {"celsius": 100})


def ran(name: str) -> int:
    """Record one run of the tool ``name`` in the log: how many times it has run, this one
    included."""
    log = Path(os.environ[LOG_ENV])
    with log.open("a") as lines:
        lines.write(name + "\n")
    return log.read_text().splitlines().count(name)


def check_build(build_id: str) -> str:
    """The status of the CI build ``build_id``."""
    run = ran("check_build")
    return f"build {build_id}: {BUILD_STATES[min(run, len(BUILD_STATES)) - 1]}"


def current_time() -> str:
    """The time now (a clock that moves a minute each time it is read)."""
    return f"09:{ran('current_time'):02d}"


def list_inbox(cursor: str) -> str:
    """The messages that arrived after ``cursor`` (one more arrives each time)."""
    arrived = INBOX[: ran("list_inbox")]
    return f"{len(arrived)} after {cursor}: " + "; ".join(arrived)


def send_message(to: str, text: str) -> str:
    """Send ``text`` to ``to``."""
    return f"message {ran('send_message')} sent to {to}"


def write_file(path: str, content: str) -> str:
    """Append ``content`` to the file ``path``."""
    ran("write_file")
    target = Path(os.environ[FILES_ENV]) / path
    with target.open("a") as file:
        file.write(content)
    return f"{path} has {target.stat().st_size} characters"


def to_fahrenheit(celsius: float) -> str:
    """``celsius`` degrees in Fahrenheit."""
    ran("to_fahrenheit")
    return f"{celsius * 9 / 5 + 32:g} °F"


def repeating(rounds: Sequence[Sequence[Call]]) -> ScriptedChatModel:
    """A model that makes ``rounds`` of calls, one model turn each, then answers with the
    results it saw (not a refusal's text: the run would take that for its own words)."""

    def reply(messages: list[BaseMessage]) -> object:
        made = sum(1 for m in messages if isinstance(m, AIMessage) and m.tool_calls)
        if made < len(rounds):
            return tool_calls(*rounds[made])
        seen = [m.text for m in messages if isinstance(m, ToolMessage) and m.status == "success"]
        return ANSWER + (" | ".join(seen) or NOTHING)

    return ScriptedChatModel(script=[reply], cycle=True)


def agent(tool: Any, *rounds: Sequence[Call]) -> Callable[[], CompiledStateGraph]:
    """A factory of the ReAct graph whose model makes ``rounds`` of calls of ``tool``."""
    return lambda: build_graph(repeating(rounds), [tool])


polling = agent(tool_spec(check_build, concurrency_safe=True), [POLL], [POLL], [POLL])
polling_plain = agent(tool(check_build), [POLL], [POLL], [POLL])
clock = agent(tool(current_time), [READ_CLOCK], [READ_CLOCK])
paging = agent(tool(list_inbox), [READ_INBOX], [READ_INBOX])
messaging_one_turn = agent(tool(send_message), [SEND, SEND])
messaging_two_turns = agent(tool(send_message), [SEND], [SEND])
writing = agent(tool_spec(write_file, dangerous=True), [WRITE], [WRITE])
converting = agent(tool_spec(to_fahrenheit, pure=True), [CONVERT], [CONVERT])
