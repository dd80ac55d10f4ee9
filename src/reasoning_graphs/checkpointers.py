"""Checkpointers named by a string, each serving a graph's sync and async faces.

Moving runs from one machine's SQLite file to a PostgreSQL database that
several processes share should be a change of setting, not of code, so
``build_graph(checkpointer=...)`` and the CLI's ``--db`` accept a string:

- ``"postgresql://user:password@host:5432/db"`` (or ``postgres://``): PostgreSQL;
  the tables are created or migrated on open, one process at a time;
- ``"runs.sqlite"`` (a path ending ``.sqlite``, ``.sqlite3`` or ``.db``), a
  :class:`~pathlib.Path`, ``"sqlite:///abs/path.db"`` or ``"sqlite:rel/path.db"``:
  a SQLite file;
- ``"memory"``: LangGraph's in-process ``InMemorySaver``.

LangGraph's ``SqliteSaver`` and ``PostgresSaver`` are sync only: a graph on
either fails at its first ``ainvoke``. The savers opened here answer the async
methods by running the sync ones in a worker thread, so one saver on one
connection serves ``invoke`` and ``ainvoke`` alike and is bound to no event
loop. The saver owns its connection: it stays open while the saver (or the
graph holding it) lives and is closed by :meth:`~OwnedConnection.close`, by
``with``, or when the last reference goes. An async-only service that wants
non-blocking database I/O can pass LangGraph's ``AsyncPostgresSaver`` itself.

Examples:
    >>> from reasoning_graphs.graphs.react import build_graph
    >>> from reasoning_graphs.testing import ScriptedChatModel
    >>> graph = build_graph(ScriptedChatModel(script=["Hello."]), checkpointer="memory")
    >>> thread = {"configurable": {"thread_id": "t1"}}
    >>> graph.invoke({"messages": [("user", "Hi")]}, thread)["messages"][-1].content
    'Hello.'
    >>> len(graph.get_state(thread).values["messages"])
    2
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import sys
import threading
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias, TypeVar
from urllib.parse import unquote

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from typing_extensions import Self

from reasoning_graphs.call_journal import forget_thread

CheckpointerSpec: TypeAlias = BaseCheckpointSaver | str | os.PathLike[str]
"""A saver, or what :func:`open_checkpointer` opens one from."""

__all__ = ["CheckpointerError", "CheckpointerSpec", "open_checkpointer"]

MEMORY = "memory"
POSTGRES_SCHEMES = frozenset({"postgresql", "postgres"})
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
CONNECT_TIMEOUT = 10
"""Seconds to wait for PostgreSQL when the connection string sets no ``connect_timeout``."""

UNKNOWN_SPEC = (
    "Cannot tell which checkpointer {spec!r} names: give a postgresql:// connection "
    "string, a SQLite file ending {suffixes}, a sqlite: URL or 'memory'."
)
UNKNOWN_SCHEME = "Unknown checkpointer URL scheme {scheme!r}: use postgresql:// or sqlite:."
SQLITE_HOST = "A sqlite: URL names a file: write sqlite:///absolute/path.db or sqlite:relative.db."
NO_POSTGRES = (
    "PostgreSQL checkpoints need the postgres extra: pip install 'reasoning-graphs[postgres]'."
)
CANNOT_OPEN = "Cannot open the database {where}: {error}"


class CheckpointerError(RuntimeError):
    """The store cannot be opened: the extra is missing, the server refuses, the file is no DB."""


class OwnedConnection:
    """A saver that owns its database connection and closes it once.

    Copies share the connection (LangGraph copies a saver when it compiles a
    graph), so it is closed when the last copy goes or at interpreter exit,
    not when the first one does.
    """

    conn: Any
    """The connection (the SQLite or PostgreSQL saver's own)."""
    lock: threading.Lock
    """Held while the saver talks on the connection."""

    def _own(self, conn: Any) -> None:
        token = _Lifetime()
        self._lifetime = token
        self._closer = weakref.finalize(token, conn.close)

    def close(self) -> None:
        """Close the connection now; the saver cannot be used afterwards."""
        self._closer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Lifetime:
    """The object every copy of an owning saver holds; its collection closes the connection."""


class ThreadedAsync(BaseCheckpointSaver):
    """The async methods of a sync saver, each run in a worker thread.

    The sync saver's own lock keeps the calls on its one connection in order,
    whichever loop or thread they come from.
    """

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        # read in one go: a sync listing may hold the saver's lock between items
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        return await asyncio.to_thread(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )


class SqliteCheckpointer(ThreadedAsync, OwnedConnection, SqliteSaver):
    """LangGraph's ``SqliteSaver`` with an async face, owning its connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn)
        self._own(conn)

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints and its record of started calls."""
        super().delete_thread(thread_id)
        forget_thread(self, thread_id)


def open_checkpointer(spec: CheckpointerSpec) -> BaseCheckpointSaver:
    """The checkpointer ``spec`` names (see the module docs); a saver is returned as it is.

    Raises:
        ValueError: ``spec`` names no kind of store.
        CheckpointerError: The store cannot be opened (the postgres extra is
            missing, the server refuses the connection, the file is no database).
    """
    if isinstance(spec, BaseCheckpointSaver):
        return spec
    where = named_database(spec)
    if isinstance(where, Path):
        return _open_sqlite(where)
    if where == MEMORY:
        return InMemorySaver()
    return _open_postgres(where)


def named_database(spec: str | os.PathLike[str]) -> Path | str:
    """What ``spec`` names: a SQLite file's :class:`~pathlib.Path`, a PostgreSQL connection
    string, or :data:`MEMORY`; the one reading of a spec that checkpointers and stores share.

    Raises:
        ValueError: ``spec`` names no kind of database.
    """
    if isinstance(spec, os.PathLike):
        return Path(spec)
    if not isinstance(spec, str):
        raise TypeError(f"A database spec is a string or a path, not {spec!r}.")
    scheme = url_scheme(spec)
    if scheme in POSTGRES_SCHEMES:
        return spec
    if scheme == "sqlite":
        return _sqlite_url_path(spec)
    if scheme is not None:
        raise ValueError(UNKNOWN_SCHEME.format(scheme=scheme))
    if spec == MEMORY:
        return MEMORY
    if spec.lower().endswith(SQLITE_SUFFIXES):
        return Path(spec).expanduser()
    raise ValueError(UNKNOWN_SPEC.format(spec=spec, suffixes="/".join(SQLITE_SUFFIXES)))


def url_scheme(spec: str) -> str | None:
    """The URL scheme ``spec`` starts with, or ``None`` for a plain path (``C:\\runs.db`` too)."""
    match = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):(//)?", spec)
    if not match:
        return None
    scheme = match.group(1).lower()
    known = scheme in POSTGRES_SCHEMES or scheme == "sqlite"
    return scheme if known or match.group(2) else None


def redacted(spec: str) -> str:
    """``spec`` fit to print: any password in it replaced by ``***``."""
    spec = re.sub(r"(://[^/:@]*):[^/@]*@", r"\1:***@", spec)
    return re.sub(r"(password=)[^&\s]*", r"\1***", spec)


def _sqlite_url_path(spec: str) -> Path:
    rest = spec.split(":", 1)[1]
    if rest.startswith("//"):
        rest = rest[2:]
        if not rest.startswith("/"):
            raise ValueError(SQLITE_HOST)
    if not rest:
        raise ValueError(SQLITE_HOST)
    return Path(unquote(rest)).expanduser()


def _open_sqlite(path: Path) -> SqliteCheckpointer:
    conn = connect_sqlite(path, CheckpointerError)
    return set_up(SqliteCheckpointer(conn), str(path), CheckpointerError)


def connect_sqlite(
    path: Path, error: type[Exception], *, autocommit: bool = False
) -> sqlite3.Connection:
    """A connection to the SQLite file ``path`` that any thread may use (the owner's lock
    keeps the calls in order), in ``autocommit`` mode for an owner that begins its own
    transactions; ``error`` when the file cannot be opened."""
    try:
        if autocommit:
            return sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        return sqlite3.connect(path, check_same_thread=False)
    except (OSError, sqlite3.Error) as failure:
        raise error(CANNOT_OPEN.format(where=path, error=failure)) from failure


def _open_postgres(dsn: str) -> BaseCheckpointSaver:
    conn = connect_postgres(dsn, CheckpointerError)
    from reasoning_graphs.postgres_checkpointer import PostgresCheckpointer

    return set_up(PostgresCheckpointer(conn), redacted(dsn), CheckpointerError)


def connect_postgres(dsn: str, error: type[Exception]) -> Any:
    """A psycopg connection as LangGraph's savers and stores need it: their own commits, no
    server-side prepared statements (poolers such as PgBouncer refuse them), rows as dicts.

    Raises:
        error: The postgres extra is missing, or the server refuses the connection.
    """
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
        from psycopg.rows import dict_row
    except ImportError as missing:
        raise error(NO_POSTGRES) from missing
    try:
        timeout = conninfo_to_dict(dsn).get("connect_timeout", CONNECT_TIMEOUT)
        return psycopg.Connection.connect(
            dsn,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            connect_timeout=timeout,
        )
    except psycopg.Error as failure:
        where = redacted(dsn)
        raise error(CANNOT_OPEN.format(where=where, error=_one_line(failure))) from failure


Owning = TypeVar("Owning", bound=OwnedConnection)


def set_up(owner: Owning, where: str, error: type[Exception]) -> Owning:
    """``owner`` with its tables created or migrated; closed, and ``error`` raised, when the
    database refuses (a file that is no database fails here, not at the first run)."""
    psycopg = sys.modules.get("psycopg")
    refusals = (sqlite3.Error, psycopg.Error) if psycopg else (sqlite3.Error,)
    try:
        owner.setup()  # type: ignore[attr-defined]
    except refusals as failure:
        owner.close()
        raise error(CANNOT_OPEN.format(where=where, error=_one_line(failure))) from failure
    return owner


def _one_line(error: BaseException) -> str:
    """libpq's messages span lines (a hint on the second); the user gets one."""
    return " ".join(str(error).split())
