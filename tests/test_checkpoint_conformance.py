"""LangGraph's checkpointer conformance suite, for every saver a spec string opens.

``langgraph-checkpoint-conformance`` drives a saver's async methods: blob
round trips, metadata, namespaces, listing filters, pending writes, deletes,
and the optional capabilities a saver implements (pruning, for PostgreSQL).
Ours answer the async methods by running LangGraph's sync savers in a worker
thread, so this checks both what the graphs' async face calls and the sync
savers' behaviour beneath it.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.memory import InMemorySaver

from reasoning_graphs.checkpointers import SqliteCheckpointer, open_checkpointer
from tests.helpers.postgres_db import create_database, drop_database, server_dsn


def registered(name: str, spec: Callable[[], str], kind: type | None = None):
    """A conformance entry that opens a fresh saver from ``spec()`` for each capability."""

    @checkpointer_test(name=name)
    async def factory() -> AsyncIterator:
        saver = open_checkpointer(spec())
        if kind is not None:
            assert isinstance(saver, kind)
        yield saver
        close = getattr(saver, "close", None)
        if close:
            close()

    return factory


def assert_conforms(report) -> None:
    failures = {
        name: result.failures
        for name, result in report.results.items()
        if result.detected and result.passed is not True
    }
    assert report.passed_all_base(), failures
    assert report.passed_all(), failures


async def test_memory_conforms() -> None:
    report = await validate(registered("memory", lambda: "memory", InMemorySaver))
    assert_conforms(report)


async def test_sqlite_file_conforms(tmp_path: Path) -> None:
    files = (str(tmp_path / f"runs-{n}.sqlite") for n in itertools.count())
    report = await validate(registered("sqlite file", lambda: next(files), SqliteCheckpointer))
    assert_conforms(report)


async def test_postgres_conforms() -> None:
    dsn = server_dsn()
    from reasoning_graphs.postgres_checkpointer import PostgresCheckpointer

    databases: list[str] = []

    def fresh() -> str:
        databases.append(create_database(dsn))
        return databases[-1]

    try:
        report = await validate(registered("postgres", fresh, PostgresCheckpointer))
    finally:
        for url in databases:
            drop_database(dsn, url)
    assert_conforms(report)
    assert report.results["prune"].detected  # the optional capability it has is checked too


async def test_a_fault_in_the_sync_saver_shows_through_the_async_face(tmp_path: Path) -> None:
    """The suite reaches the sync methods beneath: a saver that drops its writes fails it."""

    class Forgetful(SqliteCheckpointer):
        def put_writes(self, config, writes, task_id, task_path="") -> None:
            return None

    @checkpointer_test(name="forgetful sqlite")
    async def factory() -> AsyncIterator:
        with Forgetful(sqlite3.connect(tmp_path / "f.sqlite", check_same_thread=False)) as saver:
            yield saver

    report = await validate(factory, capabilities={"put_writes"})
    assert report.results["put_writes"].passed is False
