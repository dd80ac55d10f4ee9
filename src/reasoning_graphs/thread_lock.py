"""One run at a time on a thread, so that two resumers cannot both run an approved call.

Two processes answering the same waiting thread each read the pending approval
and each run the approved call. So a top-level run of our graphs holds a lock
on its thread for as long as it runs, and the lock lives where the thread does:

- a SQLite file: an OS file lock (``flock``) on a file named by a hash of the
  thread id in the folder ``<database>.thread-locks`` next to it;
- PostgreSQL (LangGraph's ``PostgresSaver`` or ``AsyncPostgresSaver``, on a
  connection or a pool, whichever engine built it): a session-level advisory lock
  keyed by a hash of the thread id, held on a connection of the lock's own to the
  saver's database for as long as the run goes;
- the in-memory saver, or SQLite in memory: a lock in this process.

The kernel drops a file lock when its process dies, and PostgreSQL drops an
advisory lock when its connection closes, so a crashed holder never keeps a
thread locked. So the lock holds across every process that shares the
database, whatever engine runs the graph (LangGraph Server, Aegra, the CLI).
A saver of any other kind gets no lock.

A run that finds its thread held fails at once with :class:`ThreadBusyError`,
or waits for it when its config says so::

    graph.invoke(Command(resume=...), {"configurable": {"thread_id": "t1", WAIT_OPTION: True}})

Holding a thread across several runs (the CLI reads the thread, asks a person
and runs on under one lock) is :func:`hold`: runs inside it take no lock of
their own.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Hashable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, ClassVar, Protocol
from weakref import WeakKeyDictionary

from langchain_core.runnables import RunnableConfig, ensure_config
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from reasoning_graphs.thread_ids import thread_digest

WAIT_OPTION = "wait_for_thread"
"""The ``configurable`` key that makes a run wait for a busy thread instead of failing."""
POLL_S = 0.05
"""How often a waiting run tries the lock again."""
LOCK_FOLDER_SUFFIX = ".thread-locks"
BUSY = (
    "Thread {thread_id!r} is busy: another run is working on it. Try again when it ends, "
    f"or set configurable {WAIT_OPTION}=True to wait for it."
)

_held: ContextVar[frozenset[Hashable]] = ContextVar(
    "reasoning_graphs_held_threads", default=frozenset()
)
"""The locks :func:`hold` holds in this context: runs inside it take none of their own."""


class ThreadBusyError(RuntimeError):
    """Another run holds the thread; nothing of this run has started."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(BUSY.format(thread_id=thread_id))
        self.thread_id = thread_id


class ThreadLock(Protocol):
    """A lock on one thread of one store."""

    key: Hashable
    """The same for every lock on the same thread of the same store."""

    def try_acquire(self) -> bool:
        """Take the lock if it is free; never waits."""

    def release(self) -> None:
        """Give the lock back (only after a successful :meth:`try_acquire`)."""


@contextmanager
def hold(saver: Any, thread_id: str, *, wait: bool = False) -> Iterator[None]:
    """Hold ``thread_id``'s lock while the block runs; runs of the thread inside it take none.

    Raises:
        ThreadBusyError: Another run holds the thread and ``wait`` is false.
    """
    lock = _lock_to_take(saver, thread_id)
    if lock is None:
        yield
        return
    _acquire(lock, thread_id, wait)
    token = _held.set(_held.get() | {lock.key})
    try:
        yield
    finally:
        _held.reset(token)
        lock.release()


@contextmanager
def run_held(saver: Any, config: RunnableConfig | None, *, nested: bool) -> Iterator[None]:
    """Hold the thread of a run on ``saver`` while the run goes (sync face).

    No lock for a run inside another graph's step (``nested``), for a run with no
    thread, on a saver of an unknown kind, or inside :func:`hold` on the same thread.
    """
    thread_id, wait = _run_thread(config, nested)
    lock = _lock_to_take(saver, thread_id) if thread_id is not None else None
    if thread_id is None or lock is None:
        yield
        return
    _acquire(lock, thread_id, wait)
    try:
        yield
    finally:
        lock.release()


@asynccontextmanager
async def arun_held(
    saver: Any, config: RunnableConfig | None, *, nested: bool
) -> AsyncIterator[None]:
    """:func:`run_held` for the async face: a try that may wait (a file lock, a round trip
    to PostgreSQL) runs in a worker thread, a lock in this process is taken on the event
    loop, and a waiting run sleeps on the loop."""
    thread_id, wait = _run_thread(config, nested)
    lock = None
    if thread_id is not None and _first_look(saver):
        # in a worker thread: finding a SQLite saver's file waits for the saver's lock
        lock = await asyncio.to_thread(_lock_to_take, saver, thread_id)
    elif thread_id is not None:
        lock = _lock_to_take(saver, thread_id)
    if thread_id is None or lock is None:
        yield
        return
    while not await _attempt(lock):
        if not wait:
            raise ThreadBusyError(thread_id)
        await asyncio.sleep(POLL_S)
    try:
        yield
    finally:
        if isinstance(lock, ProcessLock):  # never waits: given back on the loop
            lock.release()
        else:
            # shielded: a release queued for a worker thread must not be cancelled with the run
            loop = asyncio.get_running_loop()
            await asyncio.shield(loop.run_in_executor(None, lock.release))


def thread_lock(saver: Any, thread_id: str) -> ThreadLock | None:
    """The lock on ``thread_id`` of the store ``saver`` writes to; ``None`` for an unknown kind."""
    if isinstance(saver, SqliteSaver):
        database = _sqlite_file(saver)
        if database:
            return FileLock(
                Path(database + LOCK_FOLDER_SUFFIX) / f"{thread_digest(thread_id)}.lock"
            )
        return ProcessLock(("sqlite", id(saver.conn), thread_id))
    if isinstance(saver, InMemorySaver):
        return ProcessLock(("memory", id(saver.storage), thread_id))
    conninfo = postgres_conninfo(saver)
    return AdvisoryLock(conninfo, thread_id) if conninfo is not None else None


class FileLock:
    """An exclusive ``flock`` on a lock file: per open file, so it excludes other threads of
    this process too, and the kernel drops it when the process dies."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.key: Hashable = ("file", str(path))
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        self.path.parent.mkdir(mode=0o700, exist_ok=True)
        # not inherited by child processes, which could outlive this one and keep the lock
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the file drops its lock


class ProcessLock:
    """A lock within this process, by key."""

    _taken: ClassVar[set[Hashable]] = set()
    _guard: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, key: Hashable) -> None:
        self.key = key

    def try_acquire(self) -> bool:
        with self._guard:
            if self.key in self._taken:
                return False
            self._taken.add(self.key)
            return True

    def release(self) -> None:
        with self._guard:
            self._taken.discard(self.key)


class AdvisoryLock:
    """A session-level PostgreSQL advisory lock, on a connection of its own.

    The saver's connections are not used: a pool hands out a different session
    each time (and an engine's pool is sized for its own queries), and an async
    connection belongs to its event loop. The lock's connection lives as long as
    the lock is held, so the server lets the lock go when its holder dies.
    """

    def __init__(self, conninfo: str, thread_id: str) -> None:
        self._conninfo = conninfo
        self._number = int.from_bytes(
            bytes.fromhex(thread_digest(thread_id))[:8], "big", signed=True
        )
        self.key: Hashable = ("postgres", conninfo, thread_id)
        self._conn: Any = None

    def try_acquire(self) -> bool:
        import psycopg

        conn = psycopg.connect(self._conninfo, autocommit=True)
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (self._number,)).fetchone()
        except BaseException:
            conn.close()
            raise
        if not (row and row[0]):
            conn.close()
            return False
        self._conn = conn
        return True

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()  # closing the session drops its advisory locks


def postgres_conninfo(saver: Any) -> str | None:
    """The connection string of a LangGraph PostgreSQL saver's database, password
    included; ``None`` for a saver of another kind."""
    postgres = sys.modules.get("langgraph.checkpoint.postgres")
    postgres_aio = sys.modules.get("langgraph.checkpoint.postgres.aio")
    kinds = tuple(
        kind
        for kind in (
            getattr(postgres, "PostgresSaver", None),
            getattr(postgres_aio, "AsyncPostgresSaver", None),
        )
        if kind is not None
    )
    if not kinds or not isinstance(saver, kinds):
        return None
    import psycopg
    from psycopg.conninfo import make_conninfo

    conn = saver.conn
    if isinstance(conn, psycopg.Connection | psycopg.AsyncConnection):
        info = conn.info
        return make_conninfo(info.dsn, password=info.password) if info.password else info.dsn
    conninfo, kwargs = getattr(conn, "conninfo", None), getattr(conn, "kwargs", None) or {}
    if not isinstance(conninfo, str):
        return None
    named = {
        key: kwargs[key] for key in ("host", "port", "dbname", "user", "password") if key in kwargs
    }
    return make_conninfo(conninfo, **named)


def _run_thread(config: RunnableConfig | None, nested: bool) -> tuple[str | None, bool]:
    """The thread a top-level run is on (``None``: no lock to take) and whether it waits."""
    configurable = ensure_config(config).get("configurable", {})
    thread_id = configurable.get("thread_id")
    if nested or thread_id is None:
        return None, False
    return str(thread_id), bool(configurable.get(WAIT_OPTION))


def _lock_to_take(saver: Any, thread_id: str) -> ThreadLock | None:
    """``thread_id``'s lock, unless this context holds it already (see :func:`hold`)."""
    lock = thread_lock(saver, thread_id)
    return None if lock is None or lock.key in _held.get() else lock


def _acquire(lock: ThreadLock, thread_id: str, wait: bool) -> None:
    while not lock.try_acquire():
        if not wait:
            raise ThreadBusyError(thread_id)
        time.sleep(POLL_S)


async def _attempt(lock: ThreadLock) -> bool:
    """One try: on the loop for a lock in this process (it never waits), else in a worker
    thread; a try that succeeds after its caller was cancelled is given back."""
    if isinstance(lock, ProcessLock):
        return lock.try_acquire()
    loop = asyncio.get_running_loop()
    attempt = loop.run_in_executor(None, lock.try_acquire)
    try:
        return await asyncio.shield(attempt)
    except asyncio.CancelledError:
        attempt.add_done_callback(lambda done: _give_back(loop, lock, done))
        raise


def _give_back(loop: asyncio.AbstractEventLoop, lock: ThreadLock, done: asyncio.Future) -> None:
    if not done.cancelled() and done.exception() is None and done.result():
        loop.run_in_executor(None, lock.release)


def _first_look(saver: Any) -> bool:
    """Whether finding ``saver``'s lock may wait: a SQLite saver's file, before it is known."""
    return isinstance(saver, SqliteSaver) and saver not in _sqlite_files


def _sqlite_file(saver: SqliteSaver) -> str:
    """The saver's database file (``""`` for a database in memory), asked once per saver."""
    with _files_lock:
        if saver not in _sqlite_files:
            with saver.lock:
                rows = saver.conn.execute("PRAGMA database_list").fetchall()
            _sqlite_files[saver] = next((file for _, name, file in rows if name == "main"), "")
        return _sqlite_files[saver]


_sqlite_files: WeakKeyDictionary[SqliteSaver, str] = WeakKeyDictionary()
_files_lock = threading.Lock()
