"""``threads``: every thread, newest first, with how it stands, in columns under a header."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from reasoning_graphs.cli import exits
from reasoning_graphs.cli.status import thread_status
from reasoning_graphs.cli.threads import ThreadRecord

if TYPE_CHECKING:
    from reasoning_graphs.cli.store import Store

HEADER = ("THREAD", "UPDATED", "PATTERN", "STATUS", "QUESTION")
QUESTION_CHARS = 60
"""A longer question is cut to this many characters, so that each thread keeps one line."""
NO_THREADS = "No threads yet."
GAP = "  "
"""What separates two columns."""


def list_threads(store: Store, *, as_json: bool) -> int:
    """Print the threads of ``store``, each with its status read from its latest checkpoint."""
    records = store.threads.all()
    return print_threads(
        [
            (
                record,
                thread_status(
                    record,
                    store.latest(record.thread_id),
                    partial(store.step_latest, record.thread_id),
                ),
            )
            for record in records
        ],
        as_json=as_json,
    )


def print_threads(threads: Sequence[tuple[ThreadRecord, str]], *, as_json: bool) -> int:
    """Print ``threads`` (record and status) as a table, or as one JSON object per line."""
    if as_json:
        for record, status in threads:
            fields = {**record.__dict__, "status": status}
            fields.pop("owner")
            fields.pop("ended")
            print(json.dumps(fields))
    elif threads:
        for line in aligned([HEADER, *(_row(record, status) for record, status in threads)]):
            print(line)
    else:
        print(NO_THREADS)
    return exits.ANSWERED


def aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    """``rows`` as lines whose columns start at the same place; the last column is not padded."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    return [GAP.join([*map(str.ljust, row[:-1], widths), row[-1]]).rstrip() for row in rows]


def _row(record: ThreadRecord, status: str) -> tuple[str, ...]:
    question = " ".join(record.question.split())  # a question of several lines keeps one
    if len(question) > QUESTION_CHARS:
        question = question[: QUESTION_CHARS - 1] + "…"
    return (record.thread_id, record.updated, record.pattern, status, question)
