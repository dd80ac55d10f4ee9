"""PostgreSQL checkpoints for :func:`~reasoning_graphs.checkpointers.open_checkpointer`.

A module of its own because it needs the optional ``postgres`` extra, and
psycopg takes a fifth of a second to import: only a PostgreSQL spec loads it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg import Connection
from psycopg.rows import DictRow

from reasoning_graphs.call_journal import forget_thread
from reasoning_graphs.checkpointers import CheckpointerError, OwnedConnection, ThreadedAsync

SETUP_KEY = "hashtext('langgraph checkpoint setup')"
SETUP_WAIT = 120.0
"""Seconds to wait for another process's migration before giving up."""
SETUP_POLL = 0.05
SETUP_BUSY = "Another process has been migrating the checkpoint tables for {seconds:.0f} s."


class PostgresCheckpointer(ThreadedAsync, OwnedConnection, PostgresSaver):
    """LangGraph's ``PostgresSaver`` with an async face, owning its connection."""

    conn: Connection[DictRow]  # always one connection (``PostgresSaver`` also takes a pool)

    def __init__(self, conn: Connection[DictRow]) -> None:
        super().__init__(conn)
        self._own(conn)

    def setup(self) -> None:
        """Create or migrate the tables, one process at a time.

        Workers may start together on a new database, and two migrating at once
        insert the same migration row. The lock is polled, not waited for: a
        waiting ``pg_advisory_lock`` is an open transaction, which the
        migrations' ``CREATE INDEX CONCURRENTLY`` waits out, and PostgreSQL
        then reports a deadlock.
        """
        deadline = time.monotonic() + SETUP_WAIT
        lock = f"SELECT pg_try_advisory_lock({SETUP_KEY}) AS held"
        while not _held(self.conn.execute(lock).fetchone()):
            if time.monotonic() > deadline:
                raise CheckpointerError(SETUP_BUSY.format(seconds=SETUP_WAIT))
            time.sleep(SETUP_POLL)
        try:
            super().setup()
        finally:
            self.conn.execute(f"SELECT pg_advisory_unlock({SETUP_KEY})")

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints and its record of started calls."""
        super().delete_thread(thread_id)
        forget_thread(self, thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)


def _held(row: DictRow | None) -> bool:
    """Whether the row of ``pg_try_advisory_lock`` says the lock was taken."""
    return bool(row and row["held"])
