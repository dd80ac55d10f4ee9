"""Tools from real MCP servers (the ``mcp`` SDK's, over stdio and streamable HTTP) in every
tool-using pattern, on both faces: their annotations decide approval, overlap and retry,
and whatever the server does wrong comes back as an observation."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.execute import TOOL_TIMED_OUT
from reasoning_graphs.tools.mcp import McpConfigError, McpServerError, McpTools, read_servers
from reasoning_graphs.tools.spec import tool_spec
from tests.helpers.mcp_servers import NotesLog, gone, http_server, stdio_servers
from tests.helpers.one_call import one_call

TOOL_PATTERNS = [name for name, pattern in PATTERNS.items() if pattern.uses_tools]
TRANSPORTS = ["stdio", "http"]
FACES = ["sync", "async"]
CASES = list(itertools.product(TRANSPORTS, TOOL_PATTERNS, FACES))


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> NotesLog:
    return NotesLog(tmp_path_factory.mktemp("mcp") / "notes.log")


@pytest.fixture(scope="module")
def servers(notes: NotesLog) -> Iterator[dict[str, McpTools]]:
    """One stdio and one HTTP server for the module's tests, a session open to each."""
    with (
        http_server(notes.path) as http,
        McpTools(stdio_servers(notes.path)) as stdio,
        McpTools(http) as remote,
    ):
        yield {"stdio": stdio, "http": remote}


def ask(question: str = "Do it.") -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def run(graph: Any, value: Any, face: str, config: dict[str, Any] | None = None) -> Any:
    if face == "sync":
        return graph.invoke(value, config)
    return asyncio.run(graph.ainvoke(value, config))


def observations(state: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The run's calls of ``name`` as its trajectory records them (observation, status)."""
    return [e for e in state["trajectory"] if e["kind"] == "action" and e["tool"] == name]


def react(script: list[Any], tools: Any, **options: Any) -> Any:
    return graph_builder("react")(ScriptedChatModel(script=script), tools=tools, **options)


def test_annotations_become_execution_facts(servers: dict[str, McpTools]) -> None:
    facts = {
        spec.name: (spec.dangerous, spec.concurrency_safe, spec.retry_safe)
        for spec in servers["stdio"]
    }

    assert facts["add"] == (False, True, True)  # read-only: overlaps, may repeat
    assert facts["delete_note"] == (True, False, False)  # destructive: a person approves
    assert facts["save_note"] == (False, False, True)  # idempotent: safe to run again
    assert facts["note_count"] == (True, False, False)  # no hints: MCP's defaults
    assert [spec.name for spec in servers["http"]] == list(facts)


@pytest.mark.parametrize(("transport", "pattern", "face"), CASES)
def test_every_tool_using_pattern_runs_mcp_tools_on_both_faces(
    servers: dict[str, McpTools], notes: NotesLog, transport: str, pattern: str, face: str
) -> None:
    a, b = CASES.index((transport, pattern, face)), 1000
    script, options = one_call(pattern, "add", {"a": a, "b": b}, "Done.")
    graph = graph_builder(pattern)(
        ScriptedChatModel(script=script), tools=servers[transport], **options
    )

    state = run(graph, ask(f"What is {a}+{b}?"), face)

    assert state["outcome"] == {"status": "answered"}
    [observation] = observations(state, "add")
    assert observation["observation"] == str(a + b)
    assert observation["status"] == "success"
    assert notes.ran(f"add {a} {b}") == 1


@pytest.mark.parametrize("face", FACES)
@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_a_destructive_tool_runs_only_once_a_person_approves_it(
    servers: dict[str, McpTools], notes: NotesLog, face: str, decision: str
) -> None:
    name = f"{decision}-{face}"
    graph = react(
        [tool_call("delete_note", title=name), "Handled."],
        servers["stdio"],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": name}}

    paused = run(graph, ask(), face, config)

    [request] = paused["__interrupt__"]
    [call] = request.value["calls"]
    assert (call["name"], call["args"]) == ("delete_note", {"title": name})
    assert notes.ran(f"delete_note {name}") == 0

    state = run(graph, Command(resume=[{"type": decision}]), face, config)

    assert notes.ran(f"delete_note {name}") == (1 if decision == "approve" else 0)
    assert state["outcome"] == {"status": "answered"}


def test_a_tool_without_hints_asks_and_a_users_lists_and_specs_override_the_hints(
    servers: dict[str, McpTools], notes: NotesLog
) -> None:
    stdio = list(servers["stdio"])
    unhinted = react([tool_call("note_count"), "Three."], stdio, checkpointer=InMemorySaver())
    listed = react(
        [tool_call("add", a=7, b=7), "14"], stdio, checkpointer=InMemorySaver(), approve=["add"]
    )
    trusted = [
        tool_spec(spec, dangerous=False) if spec.name == "delete_note" else spec for spec in stdio
    ]
    overridden = react([tool_call("delete_note", title="spec-override"), "Gone."], trusted)
    thread = {"configurable": {"thread_id": "hints"}}

    assert unhinted.invoke(ask(), thread)["__interrupt__"]
    assert listed.invoke(ask(), thread)["__interrupt__"]
    assert notes.ran("add 7 7") == 0
    assert overridden.invoke(ask())["outcome"] == {"status": "answered"}
    assert notes.ran("delete_note spec-override") == 1


@pytest.mark.parametrize("face", FACES)
def test_a_tool_error_from_the_server_is_an_observation(
    servers: dict[str, McpTools], notes: NotesLog, face: str
) -> None:
    graph = react([tool_call("broken", reason=face), "It is broken."], servers["http"])

    state = run(graph, ask(), face)

    [observation] = observations(state, "broken")
    assert observation["status"] == "error"
    assert f"the notes index is corrupt ({face})" in observation["observation"]
    assert state["outcome"] == {"status": "answered"}
    assert notes.ran(f"broken {face}") == 1


@pytest.mark.parametrize("face", FACES)
def test_a_slow_tool_is_abandoned_at_its_timeout_and_the_session_serves_on(
    servers: dict[str, McpTools], notes: NotesLog, face: str
) -> None:
    tools = [
        tool_spec(spec, timeout=0.5) if spec.name == "nap" else spec for spec in servers["stdio"]
    ]
    a = 500 + FACES.index(face)
    script = [tool_call("nap", seconds=20), tool_call("add", a=a, b=1), "Done."]

    state = run(react(script, tools), ask(), face)

    [slow] = observations(state, "nap")
    assert slow["status"] == "error"
    assert slow["observation"] == TOOL_TIMED_OUT.format(name="nap", seconds=0.5)
    [quick] = observations(state, "add")
    assert quick["observation"] == str(a + 1)


@pytest.mark.parametrize("face", FACES)
def test_a_stdio_server_that_dies_is_an_observation_and_starts_again(
    tmp_path: Path, face: str
) -> None:
    notes = NotesLog(tmp_path / "notes.log")
    script = [tool_call("crash"), tool_call("add", a=1, b=2), "Three."]

    with McpTools(stdio_servers(notes.path)) as tools:
        state = run(react(script, tools), ask(), face)

    [died] = observations(state, "crash")
    assert died["status"] == "error"
    assert "'notes' stopped answering" in died["observation"]
    [answer] = observations(state, "add")
    assert answer["observation"] == "3"
    assert len(notes.pids()) == 2  # the first process died; the second answered


def test_an_http_server_that_dies_leaves_observations_not_tracebacks(tmp_path: Path) -> None:
    notes = NotesLog(tmp_path / "notes.log")
    script = [tool_call("crash"), tool_call("add", a=1, b=2), "The server is gone."]

    with http_server(notes.path) as config, McpTools(config) as tools:
        state = react(script, tools).invoke(ask())

    assert [m["status"] for m in observations(state, "crash") + observations(state, "add")] == [
        "error",
        "error",
    ]
    assert "'notes'" in observations(state, "add")[0]["observation"]
    assert state["outcome"] == {"status": "answered"}


def test_the_sessions_close_with_the_block(tmp_path: Path) -> None:
    notes = NotesLog(tmp_path / "notes.log")

    with McpTools(stdio_servers(notes.path)) as tools:
        react([tool_call("add", a=1, b=1), "2"], tools).invoke(ask())
        [pid] = notes.pids()
        assert not gone(pid, timeout=0)

    assert gone(pid)


async def test_the_sessions_close_with_the_async_block(tmp_path: Path) -> None:
    notes = NotesLog(tmp_path / "notes.log")

    async with McpTools(stdio_servers(notes.path)) as tools:
        await react([tool_call("add", a=1, b=1), "2"], tools).ainvoke(ask())
        [pid] = notes.pids()

    assert gone(pid)


def test_a_call_after_close_opens_the_server_again(tmp_path: Path) -> None:
    notes = NotesLog(tmp_path / "notes.log")
    tools = McpTools(stdio_servers(notes.path))
    with tools:
        pass

    state = react([tool_call("add", a=2, b=2), "4"], tools).invoke(ask())
    tools.close()

    assert observations(state, "add")[0]["observation"] == "4"
    assert len(notes.pids()) == 2
    assert all(gone(pid) for pid in notes.pids())


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ({"servers": {}}, "mcpServers"),
        ({"mcpServers": {"x": {"args": []}}}, "'x'"),
        ({"mcpServers": {"x": {"command": "python", "args": "-m x"}}}, "'x'"),
        ({"mcpServers": {"x": "python -m x"}}, "'x'"),
    ],
)
def test_a_malformed_servers_config_is_a_clear_error(config: dict, problem: str) -> None:
    with pytest.raises(McpConfigError, match=problem):
        read_servers(config)


def test_a_servers_file_is_read_like_the_mapping(tmp_path: Path) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"web": {"url": "http://127.0.0.1:1/mcp"}}}))
    (tmp_path / "broken.json").write_text("{")

    assert read_servers(path)["web"]["transport"] == "streamable_http"
    with pytest.raises(McpConfigError, match=r"broken\.json"):
        read_servers(tmp_path / "broken.json")


def test_a_server_that_cannot_start_is_named_and_the_others_are_closed(tmp_path: Path) -> None:
    notes = NotesLog(tmp_path / "notes.log")
    ghost = {"ghost": {"command": str(tmp_path / "no-such-server")}}
    config = {"mcpServers": {**stdio_servers(notes.path)["mcpServers"], **ghost}}

    with pytest.raises(McpServerError, match="'ghost'"), McpTools(config):
        pass

    [pid] = notes.pids()
    assert gone(pid)


def test_two_servers_offering_one_tool_name_are_refused(tmp_path: Path) -> None:
    log = tmp_path / "notes.log"
    config = {
        "mcpServers": {
            **stdio_servers(log, "first")["mcpServers"],
            **stdio_servers(log, "second")["mcpServers"],
        }
    }

    with pytest.raises(McpConfigError, match="'first' and 'second'"), McpTools(config):
        pass


def test_a_read_only_tools_repeat_runs_again(servers: dict[str, McpTools], notes: NotesLog) -> None:
    # readOnlyHint says the call changes nothing, not that its result cannot change
    script = [tool_call("add", a=900, b=1), tool_call("add", a=900, b=1), "901"]

    state = react(script, servers["stdio"]).invoke(ask())

    assert [e["observation"] for e in observations(state, "add")] == ["901", "901"]
    assert [e["decision"] for e in observations(state, "add")] == ["auto", "auto"]
    assert notes.ran("add 900 1") == 2
