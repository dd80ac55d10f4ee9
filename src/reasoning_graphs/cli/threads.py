"""The CLI's index of threads, kept beside the checkpoints in the same SQLite file.

Checkpoints say what a run's state is; this index says what a person needs to
find a thread again: its pattern, model, question and how it last ended, and
what a resume needs to rebuild the same graph: the limits its run was given
(a resume that dropped ``--approve`` would run those tools unasked).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
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
    limits TEXT NOT NULL DEFAULT '{}'
)
"""
ADD_LIMITS = "ALTER TABLE rg_threads ADD COLUMN limits TEXT NOT NULL DEFAULT '{}'"


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


class ThreadIndex:
    """Thread records in a SQLite connection the checkpointer also uses."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        with conn:
            conn.execute(SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(rg_threads)")}
            if "limits" not in columns:  # a file from before limits were kept
                conn.execute(ADD_LIMITS)

    def get(self, thread_id: str) -> ThreadRecord | None:
        row = self._conn.execute(
            "SELECT * FROM rg_threads WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        return _record(row) if row else None

    def all(self) -> list[ThreadRecord]:
        rows = self._conn.execute("SELECT * FROM rg_threads ORDER BY updated DESC").fetchall()
        return [_record(row) for row in rows]

    def save(
        self,
        thread_id: str,
        *,
        pattern: str,
        model: str,
        question: str,
        status: str,
        limits: Mapping[str, Any],
    ) -> None:
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._conn:
            self._conn.execute(
                """INSERT INTO rg_threads VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                   ON CONFLICT(thread_id) DO UPDATE SET pattern = excluded.pattern,
                   model = excluded.model, question = excluded.question,
                   status = excluded.status, updated = excluded.updated,
                   limits = excluded.limits""",
                (thread_id, pattern, model, question, status, now, now, json.dumps(dict(limits))),
            )

    def set_status(self, thread_id: str, status: str) -> None:
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self._conn:
            self._conn.execute(
                "UPDATE rg_threads SET status = ?, updated = ? WHERE thread_id = ?",
                (status, now, thread_id),
            )


def _record(row: tuple[Any, ...]) -> ThreadRecord:
    *fields, limits = row
    return ThreadRecord(*fields, limits=json.loads(limits))
