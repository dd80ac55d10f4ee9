"""The server's graphs give each thread a folder of its own inside a root the deployer sets."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs import react
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import (
    WORKSPACE_ENV,
    ThreadFolders,
    default_tools,
    server_tools,
)
from reasoning_graphs.tools.builtins.workspace import NO_THREAD, folder_name, server_root


def write_on(graph, thread_id: str, path: str) -> dict:
    config = {"configurable": {"thread_id": thread_id}}
    state = graph.invoke({"messages": [HumanMessage(f"write {path}")]}, config)
    (pending,) = state["__interrupt__"]
    graph.invoke(Command(resume=[{"type": "approve"}]), config)
    return pending.value["calls"][0]


def read_on(graph, thread_id: str, path: str) -> str:
    """What the model is told when it reads ``path`` on the thread."""
    config = {"configurable": {"thread_id": thread_id}}
    state = graph.invoke({"messages": [HumanMessage(f"read {path}")]}, config)
    (observation,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    return observation.content


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


LOOK_ALIKE_IDS = [
    ("alice@example.com", "alice_example.com"),
    ("a/b", "a b"),
    ("x" * 120 + "1", "x" * 120 + "2"),
    ("用户甲", "客户乙"),
    ("Alice", "alice"),  # one folder on a case-insensitive file system
    ("", "_"),
]


def assert_one_safe_component(name: str, root: Path) -> None:
    assert name not in {"", ".", ".."}
    assert not name.startswith(".")
    assert not {"/", "\\", "\0"} & set(name)
    assert name.isascii()  # no Unicode normalisation by the file system
    assert name.isprintable()
    assert len(name) <= 100
    assert (root / name).resolve().parent == root.resolve()


@pytest.mark.parametrize(("first", "second"), LOOK_ALIKE_IDS)
def test_look_alike_thread_ids_get_different_folders(first: str, second: str) -> None:
    assert folder_name(first).lower() != folder_name(second).lower()


@pytest.mark.parametrize(("first", "second"), LOOK_ALIKE_IDS)
def test_a_thread_cannot_read_what_a_look_alike_thread_wrote(
    first: str, second: str, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv(WORKSPACE_ENV, str(tmp_path))
    script = [tool_call("write_file", path="secret.txt", content="s3cret"), "Written."]
    script += [tool_call("read_file", path="secret.txt"), "Read."]
    graph = react.build_graph(ScriptedChatModel(script=script), server_tools(), InMemorySaver())

    write_on(graph, first, "secret.txt")

    assert "s3cret" not in read_on(graph, second, "secret.txt")
    assert len(list(tmp_path.iterdir())) == 2


def test_no_thread_reads_the_folder_of_calls_made_outside_a_thread(tmp_path: Path) -> None:
    outside = ThreadFolders(tmp_path).ready()  # not in a run: no thread
    (outside / "secret.txt").write_text("s3cret")
    script = [tool_call("read_file", path="secret.txt"), "Read."] * 2
    graph = react.build_graph(
        ScriptedChatModel(script=script), default_tools(ThreadFolders(tmp_path)), InMemorySaver()
    )

    for thread_id in ["no-thread", outside.name]:
        assert "s3cret" not in read_on(graph, thread_id, "secret.txt")


@pytest.mark.parametrize(
    "thread_id", ["../../etc", "a/b", "..", ".", "", "x" * 500, "a\0b", "\ud800"]
)
def test_a_thread_id_is_one_folder_name_inside_the_root(thread_id: str, tmp_path: Path) -> None:
    assert_one_safe_component(folder_name(thread_id), tmp_path)


def test_plain_thread_ids_keep_their_folder_name() -> None:
    """Server thread ids are UUIDs: their folders are named as before, and read as the id."""
    thread_id = "6f1c2a3e-9b7d-4c52-8e0f-1a2b3c4d5e6f"

    assert folder_name(thread_id) == thread_id


def test_a_folder_name_stays_readable() -> None:
    assert folder_name("alice@example.com").startswith("alice_example.com")


ANY_ID = st.one_of(
    st.text(st.characters(codec=None, exclude_categories=())),  # lone surrogates included
    st.text("aA./\\_- @\0", max_size=8),  # look-alikes made of separators and case
    st.text(min_size=150, max_size=300),
)


@given(ANY_ID, ANY_ID)
def test_distinct_thread_ids_never_share_a_folder(first: str, second: str) -> None:
    if first != second:
        assert folder_name(first).lower() != folder_name(second).lower()
    assert folder_name(first).lower() != NO_THREAD  # the folder of calls outside a thread


@given(ANY_ID)
def test_every_folder_name_is_one_safe_path_component(thread_id: str) -> None:
    assert_one_safe_component(folder_name(thread_id), Path("/srv/workspaces"))


def test_without_a_root_the_server_does_not_write_where_it_runs(monkeypatch) -> None:
    monkeypatch.delenv(WORKSPACE_ENV, raising=False)

    root = server_root()

    assert root.resolve() != Path.cwd().resolve()
    assert root.name == "workspaces"
    assert "reasoning-graphs" in root.parts  # the user's data directory for this package
