"""Which tool calls have started, written to the checkpointer's own database before they start.

LangGraph saves a finished task's result with ``put_writes`` on a background
executor, so a process killed between a tool's side effect and that save leaves
no trace of the call, and the call runs again on resume. A call that must not
simply run again therefore has its start recorded here first, synchronously and
committed, in the database its checkpoints live in; a resumed run that finds
the record knows the call may already have taken effect
(:mod:`reasoning_graphs.nodes.steps.unknown_outcome` decides what follows).

A record is keyed by thread, checkpoint namespace and call id, and counts the
times the call started there. A record is never read once the call's result is
saved (a call with a saved result does not run again); records stay, one short
row each, until their thread is deleted (the library's savers drop them with
the thread's checkpoints: :func:`forget_thread`).

Savers with a journal: LangGraph's ``SqliteSaver`` and ``PostgresSaver`` (a
connection or a pool), and so the library's own
(:mod:`reasoning_graphs.checkpointers`). A run on any other saver — in memory,
async-only, or LangGraph Server's own — keeps its journal in the run's LangGraph
store when it has one (:class:`StoreJournal`): LangGraph Server gives every run
one, kept as its checkpoints are (in memory for ``langgraph dev``, PostgreSQL for
a deployment). :func:`run_journal` picks; a run with neither has no journal.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, NamedTuple, Protocol
from weakref import WeakKeyDictionary

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.base import BaseStore

TABLE = "reasoning_graphs_call_starts"
CREATE = f"""CREATE TABLE IF NOT EXISTS {TABLE} (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    call_id TEXT NOT NULL,
    starts INTEGER NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_ns, call_id)
)"""
WHERE = "thread_id = {p} AND checkpoint_ns = {p} AND call_id = {p}"
STARTS = f"SELECT starts FROM {TABLE} WHERE {WHERE}"
RECORD = (
    f"INSERT INTO {TABLE} (thread_id, checkpoint_ns, call_id, starts) "
    "VALUES ({p}, {p}, {p}, 1) "
    f"ON CONFLICT (thread_id, checkpoint_ns, call_id) DO UPDATE SET starts = {TABLE}.starts + 1"
)
TAKE_BACK = f"UPDATE {TABLE} SET starts = starts - 1 WHERE {WHERE} AND starts > 0"
FORGET_THREAD = f"DELETE FROM {TABLE} WHERE thread_id = {{p}}"


class CallKey(NamedTuple):
    """One call in one task of one thread: the same when a crashed task runs again."""

    thread_id: str
    checkpoint_ns: str
    call_id: str


class Journal(Protocol):
    """Where the starts of calls are counted (every method blocks until it is done)."""

    def starts(self, key: CallKey) -> int:
        """How many times the call started before (0 for a call never started)."""
        ...

    def record_start(self, key: CallKey) -> None:
        """Record that the call starts now; returns once the record is kept."""
        ...

    def take_back_start(self, key: CallKey) -> None:
        """Undo the last :meth:`record_start`: the call paused the run (``interrupt()``),
        and LangGraph runs a paused call from its start again, by design."""
        ...

    def forget_thread(self, thread_id: str) -> None:
        """Drop the thread's records (the thread is being deleted)."""
        ...


Execute = Callable[[str, Sequence[Any]], list[Any]]
"""Run one statement in its own committed transaction; the rows it returns."""


class CallJournal:
    """The starts of calls, in one database. Every method blocks until the database answers."""

    def __init__(self, execute: Execute, placeholder: str) -> None:
        self._execute, self._placeholder = execute, placeholder
        self._ready = False
        self._ready_lock = threading.Lock()

    def starts(self, key: CallKey) -> int:
        rows = self._run(STARTS, key)
        return int(_first_value(rows[0])) if rows else 0

    def record_start(self, key: CallKey) -> None:
        self._run(RECORD, key)

    def take_back_start(self, key: CallKey) -> None:
        self._run(TAKE_BACK, key)

    def forget_thread(self, thread_id: str) -> None:
        self._run(FORGET_THREAD, (thread_id,))

    def _run(self, statement: str, params: Sequence[Any]) -> list[Any]:
        self._create_table()
        return self._execute(statement.format(p=self._placeholder), tuple(params))

    def _create_table(self) -> None:
        with self._ready_lock:
            if not self._ready:
                self._execute(CREATE, ())
                self._ready = True


class StoreJournal:
    """The starts of calls as items of a LangGraph store, for a run whose saver has no journal.

    One item per call and task, in one namespace; the key spells the whole
    :class:`CallKey` (a thread id may hold characters a namespace label may not).
    A thread's calls start one at a time, so reading and then writing a count races
    with nothing."""

    NAMESPACE = ("reasoning_graphs", "call_starts")

    def __init__(self, store: BaseStore) -> None:
        self._store = store

    def starts(self, key: CallKey) -> int:
        item = self._store.get(self.NAMESPACE, _item_key(key))
        return int(item.value.get("starts", 0)) if item is not None else 0

    def record_start(self, key: CallKey) -> None:
        self._put(key, self.starts(key) + 1)

    def take_back_start(self, key: CallKey) -> None:
        started = self.starts(key)
        if started:
            self._put(key, started - 1)

    def forget_thread(self, thread_id: str) -> None:
        while found := self._store.search(
            self.NAMESPACE, filter={"thread_id": thread_id}, limit=100
        ):
            for item in found:
                self._store.delete(self.NAMESPACE, item.key)

    def _put(self, key: CallKey, starts: int) -> None:
        value = {"thread_id": key.thread_id, "starts": starts}
        self._store.put(self.NAMESPACE, _item_key(key), value, index=False)


def _item_key(key: CallKey) -> str:
    return json.dumps(list(key))


def run_journal(saver: Any, store: Any) -> Journal | None:
    """The journal of a run on ``saver`` with ``store`` (either may be ``None``): the
    saver's own if it has one, else one in the store, else none."""
    journal = journal_of(saver)
    if journal is not None:
        return journal
    return StoreJournal(store) if isinstance(store, BaseStore) else None


_journals: WeakKeyDictionary[BaseCheckpointSaver, CallJournal] = WeakKeyDictionary()
_journals_lock = threading.Lock()


def forget_thread(saver: BaseCheckpointSaver, thread_id: str) -> None:
    """Drop the thread's records from ``saver``'s journal, if it has one."""
    journal = journal_of(saver)
    if journal is not None:
        journal.forget_thread(thread_id)


def journal_of(saver: Any) -> CallJournal | None:
    """The journal in ``saver``'s database, or ``None`` for a saver that has none."""
    if not isinstance(saver, BaseCheckpointSaver):
        return None
    with _journals_lock:
        journal = _journals.get(saver)
        if journal is None:
            journal = _new_journal(saver)
            if journal is None:
                return None
            _journals[saver] = journal
        return journal


def _new_journal(saver: BaseCheckpointSaver) -> CallJournal | None:
    if isinstance(saver, SqliteSaver):
        return CallJournal(_sqlite_execute(saver), "?")
    postgres = sys.modules.get("langgraph.checkpoint.postgres")  # loaded with such a saver
    if postgres is not None and isinstance(saver, postgres.PostgresSaver):
        return CallJournal(_postgres_execute(saver), "%s")
    return None


def _sqlite_execute(saver: SqliteSaver) -> Execute:
    def execute(statement: str, params: Sequence[Any]) -> list[Any]:
        with saver.lock:  # the saver's one connection, in turn with its own writes
            rows = saver.conn.execute(statement, params).fetchall()
            saver.conn.commit()
        return rows

    return execute


def _postgres_execute(saver: Any) -> Execute:
    import psycopg

    def connection() -> AbstractContextManager[psycopg.Connection]:
        if isinstance(saver.conn, psycopg.Connection):
            return _locked(saver.lock, saver.conn)
        return saver.conn.connection()  # a pool: a connection of its own, committed on return

    def execute(statement: str, params: Sequence[Any]) -> list[Any]:
        with connection() as conn:
            try:
                cursor = conn.execute(statement, params)
            except psycopg.errors.UniqueViolation:  # two processes created the table at once
                if statement != CREATE:
                    raise
                return []
            rows = cursor.fetchall() if cursor.description is not None else []
            if not conn.autocommit:
                conn.commit()
        return rows

    return execute


@contextmanager
def _locked(lock: threading.Lock, conn: Any) -> Iterator[Any]:
    with lock:
        yield conn


def _first_value(row: Any) -> Any:
    """The first column of a row, whether the connection gives tuples or dicts."""
    return next(iter(row.values())) if isinstance(row, Mapping) else row[0]
