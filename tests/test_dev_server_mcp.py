"""`langgraph dev` serving graphs with the tools of the MCP servers ``$REASONING_GRAPHS_MCP``
names: a read-only tool runs, a destructive one waits for approval over the server's API,
and run options may pick the MCP tools by name."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from reasoning_graphs.tools.builtins import MCP_ENV
from tests.helpers.dev_server import REPO, DevServer, approval_of, dev_server, refusal, run_to_rest
from tests.helpers.mcp_servers import NotesLog, stdio_servers

INMEM = "`langgraph dev` is not installed: pip install 'langgraph-cli[inmem]'"
pytest.importorskip("langgraph_cli", reason=INMEM)
pytest.importorskip("langgraph_api", reason=INMEM)
get_client = pytest.importorskip("langgraph_sdk", reason="needs langgraph-sdk").get_client

pytestmark = pytest.mark.server

MCP_APP = REPO / "tests" / "mcp_app" / "langgraph.json"


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> NotesLog:
    return NotesLog(tmp_path_factory.mktemp("mcp_notes") / "notes.log")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, notes: NotesLog) -> Iterator[DevServer]:
    scratch = tmp_path_factory.mktemp("mcp_server")
    servers = scratch / "servers.json"
    servers.write_text(json.dumps(stdio_servers(notes.path)))
    with dev_server(MCP_APP, scratch, {MCP_ENV: str(servers)}) as running:
        yield running


def ask(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


async def test_a_served_graph_runs_a_read_only_mcp_tool(server: DevServer, notes: NotesLog) -> None:
    client = get_client(url=server.url)
    thread = await client.threads.create()

    state = await run_to_rest(client, server, thread["thread_id"], input=ask("add 2 40"))

    assert state["values"]["messages"][-1]["content"] == "The server said: 42"
    assert state["values"]["outcome"] == {"status": "answered"}
    assert notes.ran("add 2 40") == 1


async def test_a_destructive_mcp_tool_waits_for_approval_on_the_server(
    server: DevServer, notes: NotesLog
) -> None:
    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]

    paused = await run_to_rest(client, server, thread_id, input=ask("delete drafts"))

    [call] = approval_of(paused)["calls"]
    assert (call["name"], call["args"]) == ("delete_note", {"title": "drafts"})
    assert notes.ran("delete_note drafts") == 0

    approve = {"resume": [{"type": "approve"}]}
    state = await run_to_rest(client, server, thread_id, command=approve)

    assert notes.ran("delete_note drafts") == 1
    assert state["values"]["messages"][-1]["content"] == "The server said: deleted drafts"


async def test_run_options_pick_mcp_tools_by_name(server: DevServer) -> None:
    client = get_client(url=server.url)

    picked = await client.assistants.create("react", context={"tools": ["add"]})
    reason = await refusal(client.assistants.create("react", context={"tools": ["subtract"]}))

    assert picked["context"] == {"tools": ["add"]}
    assert "subtract" in reason
