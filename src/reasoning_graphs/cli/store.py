"""Where the CLI keeps threads: the checkpoints and the thread index, in one database.

``--db`` (or ``$REASONING_GRAPHS_DB``) names a SQLite file or a PostgreSQL
connection string. On PostgreSQL, CLI processes on several machines share
their threads: one runs a question up to an approval, another resumes it.
The checkpointers (and LangGraph with them) are imported when a store opens,
so that the command line can name this module's settings without loading them.
``--memory`` opens a LangGraph store in the same database, beside the checkpoints.
Only a command that writes a thread creates its database: one that reads
(``threads``, ``resume`` of a thread that is not there) never leaves an empty
file, or a folder, behind a mistyped ``--db``.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from reasoning_graphs.cli.threads import ThreadIndex

DB_ENV = "REASONING_GRAPHS_DB"
STEP_LOOKBACK = 20
"""How many of a thread's newest checkpoints are searched for a running step's."""
CANNOT_OPEN = "cannot open the thread store {where}: {error}"
NO_STORE = "no thread store at {where}: it does not exist (a `run` creates it)"
NOT_A_DATABASE = (
    "the thread store {where} keeps nothing between commands: "
    "name a SQLite file or a postgresql:// URL"
)


class StoreError(Exception):
    """The thread store cannot be opened: one line for the user, a usage error."""


class MissingStore(StoreError):
    """The SQLite file of the thread store does not exist, and the command would not create it."""


def db_spec(value: str | None = None) -> str | Path:
    """What to open: ``value``, else ``$REASONING_GRAPHS_DB``, else a file in the user's
    data directory. A URL stays as written; anything else is a SQLite file path."""
    from reasoning_graphs.checkpointers import url_scheme

    value = value or os.environ.get(DB_ENV)
    if not value:
        return default_db()
    return value if url_scheme(value) else Path(value).expanduser()


def default_db() -> Path:
    """The SQLite file used when neither ``--db`` nor ``$REASONING_GRAPHS_DB`` names one."""
    return Path(user_data_dir("reasoning-graphs")) / "threads.sqlite"


def database_errors() -> tuple[type[Exception], ...]:
    """The errors a broken store raises mid-command (psycopg's only once it is in use)."""
    psycopg = sys.modules.get("psycopg")
    return (sqlite3.Error, psycopg.Error) if psycopg else (sqlite3.Error,)


class Store:
    """The checkpointer and the thread index on its connection, open while the command runs."""

    def __init__(self, spec: str | Path, *, create: bool = True) -> None:
        """Open the store ``spec`` names; a SQLite file that is missing is created (with its
        folder) only if ``create``, else :class:`MissingStore` is raised."""
        from reasoning_graphs.checkpointers import (
            CheckpointerError,
            OwnedConnection,
            open_checkpointer,
            redacted,
        )

        self.label = redacted(str(spec))
        self.resources = ExitStack()
        """What the command opens beside the database (MCP sessions, the memory store),
        closed with it."""
        self._spec = spec
        self._memory: Any = None
        if isinstance(spec, Path) and not create and not spec.exists():
            raise MissingStore(NO_STORE.format(where=self.label))
        try:
            if isinstance(spec, Path):
                spec.parent.mkdir(parents=True, exist_ok=True)
            saver = open_checkpointer(spec)
        except CheckpointerError as error:
            raise StoreError(str(error)) from error
        except (OSError, ValueError) as error:
            raise StoreError(CANNOT_OPEN.format(where=self.label, error=error)) from error
        if not isinstance(saver, OwnedConnection):  # in memory: no connection to index threads on
            raise StoreError(NOT_A_DATABASE.format(where=self.label))
        self.checkpointer: Any = saver  # a SQLite or PostgreSQL checkpointer: it owns `conn`
        try:
            self.threads = ThreadIndex(saver.conn, lock=saver.lock)
        except database_errors() as error:
            saver.close()
            raise StoreError(CANNOT_OPEN.format(where=self.label, error=error)) from error

    def latest(self, thread_id: str) -> Any:
        """The thread's latest checkpoint tuple, pending writes included (``None``: no thread)."""
        return self.checkpointer.get_tuple({"configurable": {"thread_id": thread_id}})

    def step_latest(self, thread_id: str, task_id: str) -> Any:
        """The latest checkpoint tuple of the subgraph that task ``task_id`` runs (a plan
        step, a trial), ``None`` for a task that runs none. Its checkpoints are the
        thread's newest while it runs, so the newest few are looked at."""
        newest = self.checkpointer.list(
            {"configurable": {"thread_id": thread_id}}, limit=STEP_LOOKBACK
        )
        suffix = f":{task_id}"
        return next(
            (
                t
                for t in newest
                if t.config["configurable"].get("checkpoint_ns", "").endswith(suffix)
            ),
            None,
        )

    def memory(self) -> Any:
        """The LangGraph store in the same database (its own tables, its own connection),
        opened on first use: what ``--memory`` keeps across threads."""
        if self._memory is None:
            from reasoning_graphs.stores import StoreOpenError, open_store

            try:
                self._memory = open_store(self._spec)
            except StoreOpenError as error:
                raise StoreError(str(error)) from error
            self.resources.callback(self._memory.close)
        return self._memory

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.resources.close()
        finally:
            self.checkpointer.close()
