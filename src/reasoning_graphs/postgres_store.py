"""The PostgreSQL store for :func:`~reasoning_graphs.stores.open_store`.

A module of its own because it needs the optional ``postgres`` extra: only a
PostgreSQL spec loads psycopg.
"""

from __future__ import annotations

from langgraph.store.postgres import PostgresStore
from psycopg import Connection
from psycopg.rows import DictRow

from reasoning_graphs.checkpointers import OwnedConnection
from reasoning_graphs.postgres_setup import MigrationBusy, migrating_alone
from reasoning_graphs.stores import StoreOpenError

SETUP_KEY = "langgraph store setup"


class PostgresMemoryStore(OwnedConnection, PostgresStore):
    """LangGraph's ``PostgresStore`` (whose async face runs its sync one in a worker
    thread) owning its connection, its tables migrated one process at a time."""

    conn: Connection[DictRow]

    def __init__(self, conn: Connection[DictRow]) -> None:
        super().__init__(conn)
        self._own(conn)

    def setup(self) -> None:
        """Create or migrate the tables, one process at a time (see :mod:`.postgres_setup`)."""
        try:
            with migrating_alone(self.conn, SETUP_KEY, "store"):
                super().setup()
        except MigrationBusy as error:
            raise StoreOpenError(str(error)) from error
