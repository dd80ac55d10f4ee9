"""Stores named by a string: memory that outlives a thread, serving both faces of a graph.

A checkpointer keeps one thread; a LangGraph store keeps what every thread of a
user may read again (Reflexion's lessons, what the ``remember`` tool wrote).
``build_graph(store=...)`` takes a ``BaseStore`` or a string read as
:func:`~reasoning_graphs.checkpointers.open_checkpointer` reads one:

- ``"postgresql://user:password@host:5432/db"`` (or ``postgres://``): LangGraph's
  ``PostgresStore``; its tables are created or migrated on open, one process at a time;
- ``"memory.sqlite"`` (a path ending ``.sqlite``, ``.sqlite3`` or ``.db``), a
  :class:`~pathlib.Path` or a ``sqlite:`` URL: LangGraph's ``SqliteStore``;
- ``"memory"``: LangGraph's ``InMemoryStore``, for tests.

The store's tables live beside the checkpointer's, so one database may hold both.
LangGraph's ``SqliteStore`` is sync only (its ``abatch`` raises); the one opened
here runs its sync batch in a worker thread for the async face, on its one
connection, bound to no event loop. ``PostgresStore`` already does so. Each owns
its connection and closes it when the last reference goes, or on ``close()``.

Examples:
    >>> store = open_store("memory")
    >>> store.put(("reasoning_graphs", "default", "notes"), "n1", {"text": "Paris"})
    >>> store.get(("reasoning_graphs", "default", "notes"), "n1").value
    {'text': 'Paris'}
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import TypeAlias

from langgraph.store.base import BaseStore, Op, Result
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from reasoning_graphs.checkpointers import (
    MEMORY,
    CheckpointerError,
    OwnedConnection,
    connect_postgres,
    connect_sqlite,
    named_database,
    redacted,
    set_up,
)

StoreSpec: TypeAlias = BaseStore | str | os.PathLike[str]
"""A store, or what :func:`open_store` opens one from."""

__all__ = ["StoreOpenError", "StoreSpec", "open_store"]


class StoreOpenError(CheckpointerError):
    """The store cannot be opened: the extra is missing, the server refuses, the file is no DB."""


class SqliteMemoryStore(OwnedConnection, SqliteStore):
    """LangGraph's ``SqliteStore`` with an async face, owning its connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self._own(conn)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # the sync batch holds the store's lock for its transaction; the loop waits for neither
        return await asyncio.to_thread(self.batch, list(ops))


def open_store(spec: StoreSpec) -> BaseStore:
    """The store ``spec`` names (see the module docs); a store is returned as it is.

    Raises:
        ValueError: ``spec`` names no kind of database.
        StoreOpenError: The store cannot be opened (the postgres extra is missing,
            the server refuses the connection, the file is no database).
    """
    if isinstance(spec, BaseStore):
        return spec
    where = named_database(spec)
    if isinstance(where, Path):
        conn = connect_sqlite(where, StoreOpenError, autocommit=True)  # it begins its own
        return set_up(SqliteMemoryStore(conn), str(where), StoreOpenError)
    if where == MEMORY:
        return InMemoryStore()
    from reasoning_graphs.postgres_store import PostgresMemoryStore

    conn = connect_postgres(where, StoreOpenError)
    return set_up(PostgresMemoryStore(conn), redacted(where), StoreOpenError)
