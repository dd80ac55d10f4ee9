"""Checkpointers named by a string: what each spec opens, both faces, lifetime and errors."""

from __future__ import annotations

import asyncio
import copy
import gc
import socket
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.checkpointers import (
    CheckpointerError,
    SqliteCheckpointer,
    open_checkpointer,
    redacted,
)
from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.testing import ScriptedChatModel, tool_call

APPROVE = [{"type": "approve"}]


@pytest.fixture(params=["sqlite", "postgres"])
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A string naming a fresh store: a SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.sqlite")
    return request.getfixturevalue("postgres_url")


def deploy_graph(spec: str, tools: list, script: list) -> Any:
    return build_graph(ScriptedChatModel(script=script), tools=tools, checkpointer=spec)


def start(graph: Any, thread: dict, *, face: str) -> dict:
    payload = {"messages": [("user", "Deploy prod.")]}
    if face == "async":
        return asyncio.run(graph.ainvoke(payload, thread))
    return graph.invoke(payload, thread)


def resume(graph: Any, thread: dict, *, face: str) -> dict:
    if face == "async":
        return asyncio.run(graph.ainvoke(Command(resume=APPROVE), thread))
    return graph.invoke(Command(resume=APPROVE), thread)


@pytest.mark.parametrize(("first", "then"), [("async", "sync"), ("sync", "async")])
def test_a_run_paused_on_one_face_resumes_on_the_other_from_a_new_graph(
    spec, tools, log, thread, first, then
) -> None:
    paused = start(
        deploy_graph(spec, tools, [tool_call("deploy", item="prod"), "deployed"]),
        thread,
        face=first,
    )
    (request,) = paused["__interrupt__"]
    assert [call["name"] for call in request.value["calls"]] == ["deploy"]
    assert log.names() == []

    # a second graph on its own connection: what a second process would build
    done = resume(deploy_graph(spec, tools, ["deployed"]), thread, face=then)

    assert "__interrupt__" not in done
    assert done["messages"][-1].content == "deployed"
    assert log.names() == ["deploy"]


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_every_pattern_takes_a_spec_string(pattern: str, tmp_path: Path) -> None:
    graph = graph_builder(pattern)(
        ScriptedChatModel(script=["x"], cycle=True), checkpointer=str(tmp_path / "runs.db")
    )
    assert isinstance(graph.checkpointer, SqliteCheckpointer)


def test_a_saver_passes_through_unchanged() -> None:
    saver = InMemorySaver()
    assert open_checkpointer(saver) is saver
    assert build_graph(ScriptedChatModel(script=["x"]), checkpointer=saver).checkpointer is saver


def test_memory_names_the_in_process_saver() -> None:
    assert isinstance(open_checkpointer("memory"), InMemorySaver)


@pytest.mark.parametrize(
    "written",
    ["{dir}/a.sqlite", "{dir}/a.sqlite3", "{dir}/a.DB", "sqlite://{dir}/a.db", "sqlite:{dir}/a.db"],
)
def test_sqlite_forms_open_the_file_they_name(written: str, tmp_path: Path) -> None:
    spec = written.format(dir=tmp_path)
    with open_checkpointer(spec) as saver:
        assert isinstance(saver, SqliteCheckpointer)
        (name,) = [row[2] for row in saver.conn.execute("PRAGMA database_list")]
    assert Path(name).parent == tmp_path
    assert Path(name).name.lower() in {"a.sqlite", "a.sqlite3", "a.db"}


def test_a_relative_sqlite_url_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    open_checkpointer("sqlite:runs.db").close()
    assert (tmp_path / "runs.db").is_file()


def test_a_path_object_is_always_a_sqlite_file(tmp_path: Path) -> None:
    with open_checkpointer(tmp_path / "threads") as saver:
        assert isinstance(saver, SqliteCheckpointer)
    assert (tmp_path / "threads").is_file()


@pytest.mark.parametrize("spec", ["runs.txt", "postgresq://x/y", "mysql://db/x", "sqlite://host/x"])
def test_a_spec_that_names_nothing_known_is_refused(spec: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\w"):
        open_checkpointer(spec)
    assert list(tmp_path.iterdir()) == []


def test_a_file_that_is_no_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("not a database " * 100)
    with pytest.raises(CheckpointerError, match=r"notes\.db"):
        open_checkpointer(str(path))


def test_copies_share_the_connection_until_the_last_one_goes(tmp_path: Path) -> None:
    """LangGraph may keep a copy of the saver and drop the one it was given."""
    saver = open_checkpointer(str(tmp_path / "runs.sqlite"))
    conn = saver.conn
    clone = copy.copy(saver)
    del saver
    gc.collect()
    assert clone.get_tuple({"configurable": {"thread_id": "none"}}) is None

    del clone
    gc.collect()
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")


def test_close_and_with_end_the_connection(tmp_path: Path) -> None:
    with open_checkpointer(str(tmp_path / "runs.sqlite")) as saver:
        conn = saver.conn
        conn.execute("SELECT 1")
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")
    saver.close()  # a second close is harmless


def test_a_graph_built_from_a_string_keeps_its_connection(tmp_path: Path, thread) -> None:
    graph = build_graph(
        ScriptedChatModel(script=["one", "two"]), checkpointer=str(tmp_path / "r.db")
    )
    gc.collect()
    graph.invoke({"messages": [("user", "1")]}, thread)
    gc.collect()
    state = graph.invoke({"messages": [("user", "2")]}, thread)
    assert [m.content for m in state["messages"]] == ["1", "one", "2", "two"]


def test_a_missing_postgres_extra_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # what an uninstalled package looks like
    with pytest.raises(CheckpointerError, match=r"\[postgres\]"):
        open_checkpointer("postgresql://user@localhost/db")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_refused_connection_is_one_line_without_the_password() -> None:
    pytest.importorskip("psycopg", reason="pip install '.[postgres]'")
    dsn = f"postgresql://rg:s3cret@127.0.0.1:{closed_port()}/db"
    with pytest.raises(CheckpointerError) as raised:
        open_checkpointer(dsn)
    message = str(raised.value)
    assert "\n" not in message
    assert "s3cret" not in message
    assert redacted(dsn) in message  # it names the store it could not open


def test_redacted_hides_passwords_in_both_forms() -> None:
    assert redacted("postgresql://u:p%40ss@h:5432/d") == "postgresql://u:***@h:5432/d"
    assert redacted("postgresql://h/d?user=u&password=pw&sslmode=require") == (
        "postgresql://h/d?user=u&password=***&sslmode=require"
    )
    assert redacted("postgresql://u@h/d") == "postgresql://u@h/d"


def test_postgres_workers_starting_together_on_a_new_database_all_open(
    postgres_url: str,
) -> None:
    """Each opening creates or migrates the tables; started at once they must not collide."""
    opened: list[Any] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def open_one() -> None:
        barrier.wait()
        try:
            opened.append(open_checkpointer(postgres_url))
        except BaseException as error:  # collected for the assertion below
            errors.append(error)

    workers = [threading.Thread(target=open_one) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    try:
        assert errors == []
        assert len(opened) == 4
        assert opened[0].get_tuple({"configurable": {"thread_id": "none"}}) is None
    finally:
        for saver in opened:
            saver.close()
