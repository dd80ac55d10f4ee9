"""One process at a time creates or migrates a PostgreSQL schema (checkpoints, the store).

Workers may start together on a new database, and two migrating at once insert
the same migration row. The lock is polled, not waited for: a waiting
``pg_advisory_lock`` is an open transaction, which the migrations'
``CREATE INDEX CONCURRENTLY`` waits out, and PostgreSQL then reports a deadlock.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from psycopg import Connection
from psycopg.rows import DictRow

SETUP_WAIT = 120.0
"""Seconds to wait for another process's migration before giving up."""
SETUP_POLL = 0.05
SETUP_BUSY = "Another process has been migrating the {what} tables for {seconds:.0f} s."


class MigrationBusy(RuntimeError):
    """Another process held the migration lock for longer than :data:`SETUP_WAIT`."""


@contextmanager
def migrating_alone(conn: Connection[DictRow], key: str, what: str) -> Iterator[None]:
    """Hold the advisory lock ``hashtext(key)`` while the block migrates ``what``."""
    deadline = time.monotonic() + SETUP_WAIT
    lock = f"SELECT pg_try_advisory_lock(hashtext('{key}')) AS held"
    while not _held(conn.execute(lock).fetchone()):
        if time.monotonic() > deadline:
            raise MigrationBusy(SETUP_BUSY.format(what=what, seconds=SETUP_WAIT))
        time.sleep(SETUP_POLL)
    try:
        yield
    finally:
        conn.execute(f"SELECT pg_advisory_unlock(hashtext('{key}'))")


def _held(row: DictRow | None) -> bool:
    """Whether the row of ``pg_try_advisory_lock`` says the lock was taken."""
    return bool(row and row["held"])
