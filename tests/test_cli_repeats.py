"""The command line and a call made again: it runs again, unless its tool is pure or refused.

A tool's world changes without us: a build finishes, a clock moves, an inbox
fills, a message sent twice is two messages. So every call the model makes
runs, repeats included, and the screen shows each as ``Action:`` and
``Observation:``; a dangerous repeat is put to the person again. Two repeats
do not run: a pure tool's (``tool_spec(f, pure=True)``), answered from the
identical earlier call (``Reused:``), and a call a person rejected earlier in
the question (``Rejected before:``, not asked again). A call shows only once its
fate is known: one waiting for a person is the approval prompt, not an action.

Each test runs ``reasoning-graphs run --graph`` on a graph of
:mod:`tests.helpers.repeat_agents` as a process of its own on a pseudo-terminal,
as a person's shell runs it, and counts the tools' runs in their log; one runs a
read-only tool of a real MCP server (the test server, over stdio) with ``--mcp``.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reasoning_graphs.cli import exits
from reasoning_graphs.cli.prompting import PROMPT
from reasoning_graphs.cli.status_line import WIPE
from tests.helpers import HELPERS
from tests.helpers.cli_driver import Terminal
from tests.helpers.mcp_servers import stdio_servers
from tests.helpers.repeat_agents import FILES_ENV, LOG_ENV, NOTHING, WRITE
from tests.helpers.scripted_cli import command_line

AGENTS = HELPERS / "repeat_agents.py"
DECISION_PROMPT = PROMPT.split("{")[0]  # "Decision for "
REASON_PROMPT = "Reason (optional): "
LABELS = (
    "Action",
    "Observation",
    "Reused",
    "Rejected",
    "Rejected before",
    "Responded",
    "Not run",
    "Approval",
    "Answer",
)
"""The labels of the lines that say what became of a call, and of the answer."""
RAN = ["Action", "Observation"]
ONLINE_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "REASONING_GRAPHS_MODEL")


@dataclass
class Screen:
    """What a finished command showed: its exit code and its lines, as the terminal shows
    them (the status line wiped)."""

    code: int
    text: str

    @property
    def lines(self) -> list[str]:
        return [line.split(WIPE)[-1] for line in self.text.replace("\r\n", "\n").split("\n")]

    def shown(self) -> list[tuple[str, str]]:
        """The labelled lines, in order: (label, text)."""
        return [
            (label, line.removeprefix(f"{label}: "))
            for line in self.lines
            if (label := label_of(line)) is not None
        ]

    def labels(self) -> list[str]:
        return [label for label, _ in self.shown()]

    def texts(self, label: str) -> list[str]:
        return [text for shown_label, text in self.shown() if shown_label == label]


def label_of(line: str) -> str | None:
    """The label a line starts with (the longest that fits: ``Rejected before``)."""
    fitting = [label for label in LABELS if line.startswith(f"{label}: ")]
    return max(fitting, key=len, default=None)


@dataclass
class World:
    """The tools' world for one test: their run log, their files and the thread store."""

    root: Path

    @property
    def log(self) -> Path:
        return self.root / "runs.log"

    def env(self) -> dict[str, str]:
        env = {name: value for name, value in os.environ.items() if name not in ONLINE_ENV}
        return env | {
            "REASONING_GRAPHS_DB": str(self.root / "threads.sqlite"),
            LOG_ENV: str(self.log),
            FILES_ENV: str(self.root),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "LANGSMITH_TRACING": "false",
        }

    def runs(self, tool: str) -> int:
        """How many times ``tool`` ran."""
        return self.log.read_text().splitlines().count(tool) if self.log.exists() else 0

    def start(self, graph: str, *flags: str) -> Terminal:
        """``reasoning-graphs run … --graph repeat_agents.py:GRAPH FLAGS…`` on a terminal."""
        command = [sys.executable, "-m", "reasoning_graphs", "run", "Go.", "--graph"]
        return Terminal([*command, f"{AGENTS}:{graph}", *flags], env=self.env())

    def run(self, graph: str, *flags: str) -> Screen:
        """The command run to its end with nobody typing."""
        return Screen(*self.start(graph, *flags).finish(timeout=30))


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def finished(terminal: Terminal) -> Screen:
    return Screen(*terminal.finish(timeout=30))


def ran_each_time(screen: Screen, times: int) -> list[str]:
    """Check that the run answered after ``times`` identical calls that each ran and was
    shown as an action and its observation; the observations, in order."""
    assert screen.code == exits.ANSWERED, screen.text
    assert screen.labels() == RAN * times + ["Answer"], screen.text
    assert len(set(screen.texts("Action"))) == 1  # the same call each time
    return screen.texts("Observation")


@pytest.mark.parametrize("graph", ["polling", "polling_plain"], ids=["read-only", "plain-tool"])
def test_a_polled_build_status_runs_each_time_until_it_passes(world: World, graph: str) -> None:
    screen = world.run(graph)

    observations = ran_each_time(screen, 3)
    assert screen.texts("Action")[0].startswith("check_build(")
    assert "42" in screen.texts("Action")[0]
    assert [text.split()[-1] for text in observations] == ["running", "running", "passed"]
    assert "passed" in screen.texts("Answer")[0]
    assert world.runs("check_build") == 3


def test_a_clock_read_twice_shows_two_times(world: World) -> None:
    observations = ran_each_time(world.run("clock"), 2)

    assert observations[0] != observations[1]
    assert world.runs("current_time") == 2


def test_a_page_read_twice_with_the_same_cursor_shows_what_arrived_since(world: World) -> None:
    observations = ran_each_time(world.run("paging"), 2)

    assert observations[0] != observations[1]
    assert world.runs("list_inbox") == 2


@pytest.mark.parametrize(
    "graph", ["messaging_one_turn", "messaging_two_turns"], ids=["one-turn", "two-turns"]
)
def test_a_message_sent_twice_is_sent_twice(world: World, graph: str) -> None:
    observations = ran_each_time(world.run(graph), 2)

    assert observations[0] != observations[1]  # two messages, numbered by the tool
    assert world.runs("send_message") == 2


def test_an_approved_dangerous_call_repeated_is_put_to_the_person_again(world: World) -> None:
    terminal = world.start("writing")
    terminal.wait_for_count(DECISION_PROMPT, 1)
    assert "Action: write_file" not in terminal.output  # waiting for a person: no action yet
    assert world.runs("write_file") == 0

    terminal.type("a")
    terminal.wait_for_count(DECISION_PROMPT, 2)
    assert world.runs("write_file") == 1
    terminal.type("a")
    screen = finished(terminal)

    assert screen.code == exits.ANSWERED, screen.text
    assert screen.labels() == (["Approval", *RAN] * 2) + ["Answer"], screen.text
    assert all(text.startswith("write_file(") for text in screen.texts("Action"))
    assert world.runs("write_file") == 2
    assert (world.root / WRITE[1]["path"]).read_text() == WRITE[1]["content"] * 2


def test_a_rejected_call_proposed_again_is_answered_from_the_rejection(world: World) -> None:
    terminal = world.start("writing")
    terminal.wait_for_count(DECISION_PROMPT, 1)
    terminal.type("r")
    terminal.wait_for(REASON_PROMPT)
    terminal.type("not now")
    screen = finished(terminal)

    assert screen.code == exits.ANSWERED, screen.text
    assert screen.text.count(DECISION_PROMPT) == 1  # asked once
    assert screen.labels() == ["Approval", "Rejected", "Rejected before", "Answer"], screen.text
    assert screen.texts("Rejected before")[0].startswith("write_file(")
    assert NOTHING in screen.texts("Answer")[0]
    assert world.runs("write_file") == 0
    assert not (world.root / WRITE[1]["path"]).exists()


def test_a_pure_tool_called_twice_runs_once_and_says_the_repeat_was_reused(
    world: World,
) -> None:
    screen = world.run("converting")

    assert screen.code == exits.ANSWERED, screen.text
    assert screen.labels() == [*RAN, "Reused", "Answer"], screen.text
    assert screen.texts("Reused")[0].startswith("to_fahrenheit(")
    assert screen.texts("Observation")[0] in screen.texts("Reused")[0]  # the earlier result
    assert world.runs("to_fahrenheit") == 1


def events_of(screen: Screen) -> list[dict[str, Any]]:
    """The JSON lines the command wrote, in order."""
    return [json.loads(line) for line in screen.lines if line.startswith("{")]


def test_json_output_names_the_call_a_pure_repeat_was_answered_from(world: World) -> None:
    screen = world.run("converting", "--json")
    events = events_of(screen)
    calls = [event for event in events if event["event"] in ("action", "reused")]

    assert screen.code == exits.ANSWERED, screen.text
    assert [event["event"] for event in calls] == ["action", "reused"]
    action, reused = calls
    assert reused["reused_from"] == action["call_id"]
    assert reused["call_id"] != action["call_id"]
    assert reused["tool"] == action["tool"] == "to_fahrenheit"
    assert reused["args"] == action["args"]
    assert reused["decision"] == "reused"
    observation = next(event for event in events if event["event"] == "observation")
    assert reused["result"] == observation["text"]
    assert world.runs("to_fahrenheit") == 1


def test_an_mcp_read_only_poll_runs_at_every_check(world: World) -> None:
    servers = world.root / "servers.json"
    servers.write_text(json.dumps(stdio_servers(world.log)))
    check = {"tool": "build_status", "args": {"build_id": "42"}}
    script = [check, check, check, "The build passed."]
    command = command_line(script, "run", "Is build 42 green?", "--mcp", str(servers))

    screen = Screen(*Terminal(command, env=world.env()).finish(timeout=60))

    observations = ran_each_time(screen, 3)
    assert [text.split()[-1] for text in observations] == ["running", "running", "passed"]
    assert world.log.read_text().splitlines().count("build_status 42") == 3
