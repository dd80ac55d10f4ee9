"""The CLI's index of threads, kept beside the checkpoints in the same database.

Checkpoints say what a run's state is; this index says what a person needs to
find a thread again: its pattern, model, question and how it last ended, and
what a resume needs to rebuild the same graph: the limits its run was given
(a resume that dropped ``--approve`` would run those tools unasked) and the
folders its tools work in (a resume started elsewhere must write where the
run was approved to write). How a thread stands is read from its checkpoint
(:mod:`reasoning_graphs.cli.status`); the index adds which checkpoint a run
ended on and which process is running it, so that a run killed mid-way is
not shown as running.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS rg_threads (
    thread_id TEXT PRIMARY KEY,
    pattern TEXT NOT NULL,
    model TEXT NOT NULL,
    question TEXT NOT NULL,
    status TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    limits TEXT NOT NULL DEFAULT '{}',
    workspace TEXT,
    docs TEXT,
    owner TEXT,
    ended TEXT,
    mcp TEXT,
    builtins INTEGER
)
"""
ADDED_COLUMNS = {
    "limits": "limits TEXT NOT NULL DEFAULT '{}'",
    "workspace": "workspace TEXT",
    "docs": "docs TEXT",
    "owner": "owner TEXT",
    "ended": "ended TEXT",
    "mcp": "mcp TEXT",
    "builtins": "builtins INTEGER",
}
"""Columns a file from an earlier version lacks, added when it is opened."""
COLUMNS = (
    "thread_id, pattern, model, question, status, created, updated, limits, "
    "workspace, docs, owner, ended, mcp, builtins"
)


@dataclass(frozen=True)
class Dialect:
    """What differs between the databases the index lives in; the statements do not."""

    placeholder: str
    columns: str
    """A query for the names of ``rg_threads``' columns."""
    schema_lock: str | None
    """A statement that makes concurrent schema changes wait their turn, where needed."""
    transaction: Callable[[Any], AbstractContextManager[Any]]


SQLITE = Dialect(
    placeholder="?",
    columns="SELECT name FROM pragma_table_info('rg_threads')",
    schema_lock=None,  # a SQLite write already locks the whole file
    transaction=lambda conn: conn,  # commits on leaving, rolls back on an error
)
POSTGRES = Dialect(
    placeholder="%s",
    columns=(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = 'rg_threads'"
    ),
    # two processes creating the table at once collide in PostgreSQL's catalog
    schema_lock="SELECT pg_advisory_xact_lock(hashtext('rg_threads'))",
    transaction=lambda conn: conn.transaction(),  # ``with conn`` would close it
)


@dataclass(frozen=True)
class ThreadRecord:
    thread_id: str
    pattern: str
    model: str
    question: str
    status: str
    created: str
    updated: str
    limits: dict[str, Any]
    workspace: str | None = None
    """The folder the file and shell tools work in, absolute."""
    docs: str | None = None
    """The folder ``search_docs`` searches, absolute, or none."""
    owner: str | None = None
    """``host:pid`` of the process running the thread, while it runs."""
    ended: str | None = None
    """The checkpoint the last run ended on; a later checkpoint means a run since."""
    mcp: str | None = None
    """The MCP servers file whose tools the thread's runs get, absolute, or none."""
    builtins: bool | None = None
    """Whether the thread's runs get the built-in tools (``None``: a thread from before the
    choice was kept, which got them)."""


class ThreadIndex:
    """Thread records on the connection the checkpointer also uses: SQLite or PostgreSQL.

    ``lock`` is the checkpointer's, so the index never talks on the shared
    connection while the checkpointer does.
    """

    def __init__(self, conn: Any, lock: AbstractContextManager[Any] | None = None) -> None:
        self._conn = conn
        self._dialect = SQLITE if isinstance(conn, sqlite3.Connection) else POSTGRES
        self._lock = lock or nullcontext()
        with self._transaction():
            if self._dialect.schema_lock:
                self._execute(self._dialect.schema_lock)
            self._execute(SCHEMA)
            columns = {_values(row)[0] for row in self._execute(self._dialect.columns)}
            for name, definition in ADDED_COLUMNS.items():
                if name not in columns:  # a file from an earlier version
                    self._execute(f"ALTER TABLE rg_threads ADD COLUMN {definition}")

    def get(self, thread_id: str) -> ThreadRecord | None:
        with self._lock:
            row = self._execute(
                f"SELECT {COLUMNS} FROM rg_threads WHERE thread_id = ?", (thread_id,)
            ).fetchone()
        return _record(row) if row else None

    def all(self) -> list[ThreadRecord]:
        with self._lock:
            rows = self._execute(f"SELECT {COLUMNS} FROM rg_threads ORDER BY updated DESC")
            return [_record(row) for row in rows.fetchall()]

    def save(
        self,
        thread_id: str,
        *,
        pattern: str,
        model: str,
        question: str,
        status: str,
        limits: Mapping[str, Any],
        workspace: str | None = None,
        docs: str | None = None,
        owner: str | None = None,
        mcp: str | None = None,
        builtins: bool = True,
    ) -> None:
        now = _now()
        with self._transaction():
            self._execute(
                f"""INSERT INTO rg_threads ({COLUMNS})
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)
                   ON CONFLICT(thread_id) DO UPDATE SET pattern = excluded.pattern,
                   model = excluded.model, question = excluded.question,
                   status = excluded.status, updated = excluded.updated,
                   limits = excluded.limits, workspace = excluded.workspace,
                   docs = excluded.docs, owner = excluded.owner, ended = NULL,
                   mcp = excluded.mcp, builtins = excluded.builtins""",
                (
                    thread_id,
                    pattern,
                    model,
                    question,
                    status,
                    now,
                    now,
                    json.dumps(dict(limits)),
                    workspace,
                    docs,
                    owner,
                    mcp,
                    int(builtins),
                ),
            )

    def started(
        self,
        thread_id: str,
        *,
        owner: str,
        workspace: str | None,
        docs: str | None,
        mcp: str | None = None,
        builtins: bool = True,
    ) -> None:
        """A run of the thread began in ``owner``, with its tools in these folders, from
        these MCP servers, and the built-in ones or not."""
        with self._transaction():
            self._execute(
                "UPDATE rg_threads SET status = 'running', owner = ?, ended = NULL, "
                "updated = ?, workspace = ?, docs = ?, mcp = ?, builtins = ? WHERE thread_id = ?",
                (owner, _now(), workspace, docs, mcp, int(builtins), thread_id),
            )

    def set_status(self, thread_id: str, status: str, *, ended: str | None = None) -> None:
        """How the run ended; ``ended`` is the checkpoint it ended on, if it came to an end."""
        with self._transaction():
            self._execute(
                "UPDATE rg_threads SET status = ?, updated = ?, owner = NULL, ended = ? "
                "WHERE thread_id = ?",
                (status, _now(), ended, thread_id),
            )

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._lock, self._dialect.transaction(self._conn):
            yield

    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return self._conn.execute(sql.replace("?", self._dialect.placeholder), params)


def _values(row: Sequence[Any] | Mapping[str, Any]) -> tuple[Any, ...]:
    """A row's values in column order, as a tuple (SQLite) or a dict (PostgresSaver's rows)."""
    return tuple(row.values()) if isinstance(row, Mapping) else tuple(row)


def _record(row: Sequence[Any] | Mapping[str, Any]) -> ThreadRecord:
    values = list(_values(row))
    values[7] = json.loads(values[7])  # the limits, stored as JSON text
    values[13] = None if values[13] is None else bool(values[13])
    return ThreadRecord(*values)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
