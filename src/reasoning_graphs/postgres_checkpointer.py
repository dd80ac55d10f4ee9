"""PostgreSQL checkpoints for :func:`~reasoning_graphs.checkpointers.open_checkpointer`.

A module of its own because it needs the optional ``postgres`` extra, and
psycopg takes a fifth of a second to import: only a PostgreSQL spec loads it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from langgraph.checkpoint.postgres import PostgresSaver
from psycopg import Connection
from psycopg.rows import DictRow

from reasoning_graphs.call_journal import forget_thread
from reasoning_graphs.checkpointers import CheckpointerError, OwnedConnection, ThreadedAsync
from reasoning_graphs.postgres_setup import MigrationBusy, migrating_alone

SETUP_KEY = "langgraph checkpoint setup"


class PostgresCheckpointer(ThreadedAsync, OwnedConnection, PostgresSaver):
    """LangGraph's ``PostgresSaver`` with an async face, owning its connection."""

    conn: Connection[DictRow]  # always one connection (``PostgresSaver`` also takes a pool)

    def __init__(self, conn: Connection[DictRow]) -> None:
        super().__init__(conn)
        self._own(conn)

    def setup(self) -> None:
        """Create or migrate the tables, one process at a time (see :mod:`.postgres_setup`)."""
        try:
            with migrating_alone(self.conn, SETUP_KEY, "checkpoint"):
                super().setup()
        except MigrationBusy as error:
            raise CheckpointerError(str(error)) from error

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints and its record of started calls."""
        super().delete_thread(thread_id)
        forget_thread(self, thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)
