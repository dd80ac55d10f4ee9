"""The server's graphs give each thread a folder of its own inside a root the deployer sets."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs import react
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import WORKSPACE_ENV, server_tools
from reasoning_graphs.tools.builtins.workspace import folder_name, server_root


def write_on(graph, thread_id: str, path: str) -> dict:
    config = {"configurable": {"thread_id": thread_id}}
    state = graph.invoke({"messages": [HumanMessage(f"write {path}")]}, config)
    (pending,) = state["__interrupt__"]
    graph.invoke(Command(resume=[{"type": "approve"}]), config)
    return pending.value["calls"][0]


def test_each_thread_writes_in_its_own_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path))
    script = [tool_call("write_file", path="a.txt", content="first"), "Written."]
    script += [tool_call("write_file", path="a.txt", content="second"), "Written."]
    graph = react.build_graph(ScriptedChatModel(script=script), server_tools(), InMemorySaver())

    asked = write_on(graph, "thread-1", "a.txt")
    write_on(graph, "thread-2", "a.txt")

    assert asked["description"].endswith(f"at {tmp_path.resolve() / 'thread-1' / 'a.txt'}")
    assert (tmp_path / "thread-1" / "a.txt").read_text() == "first"
    assert (tmp_path / "thread-2" / "a.txt").read_text() == "second"
    assert not (tmp_path / "a.txt").exists()


def test_a_path_cannot_leave_the_threads_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path))
    (tmp_path / "other").mkdir()
    script = [tool_call("write_file", path="../other/a.txt", content="x"), "Tried."]
    graph = react.build_graph(ScriptedChatModel(script=script), server_tools(), InMemorySaver())

    write_on(graph, "mine", "../other/a.txt")

    assert not (tmp_path / "other" / "a.txt").exists()


@pytest.mark.parametrize("thread_id", ["../../etc", "a/b", "..", "", "x" * 500])
def test_a_thread_id_is_one_folder_name_inside_the_root(thread_id: str, tmp_path: Path) -> None:
    name = folder_name(thread_id)

    assert (tmp_path / name).resolve().parent == tmp_path.resolve()
    assert len(name) <= 120


def test_without_a_root_the_server_does_not_write_where_it_runs(monkeypatch) -> None:
    monkeypatch.delenv(WORKSPACE_ENV, raising=False)

    root = server_root()

    assert root.resolve() != Path.cwd().resolve()
    assert root.name == "workspaces"
    assert "reasoning-graphs" in root.parts  # the user's data directory for this package
