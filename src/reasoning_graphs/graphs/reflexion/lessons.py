"""Reflexion's lessons across threads: saved by ``reflect``, recalled by ``recall``.

With a store (the graph's, or the server's), each lesson is also saved under the
run's user (:meth:`~reasoning_graphs.nodes.model.setup.RunScope.memory_namespace`)
with the task it was drawn from, as the model wrote it but cut at
:data:`STORED_CHARS` a field. ``recall``, the first step of every question, ranks
the user's saved tasks against the new one with BM25 and keeps the best
``recall_lessons`` above the relevance floor (:func:`~reasoning_graphs.memory.relevant`),
so a similar question on any thread starts with them and an unrelated one gets
none. Each is shown to the first attempt cut to 800 characters, as data: a lesson
is model text, and a model that floods it must not fill every later prompt.

The store is a convenience, never a cause of failure: a store that fails is
logged and the question goes on without it. A lesson's key is made from its
thread, question and trial, so a ``reflect`` repeated after a crash overwrites
its own lesson instead of adding a second.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from langgraph.config import get_config
from langgraph.store.base import Item, PutOp, SearchOp

from reasoning_graphs.effects import Blocking, Body, StoreOps
from reasoning_graphs.graphs.reflexion.prompts import (
    REMEMBERED_SOURCE,
    REMEMBERED_TASK,
)
from reasoning_graphs.graphs.reflexion.state import (
    Lesson,
    RecallUpdate,
    ReflexionState,
    RememberedLesson,
)
from reasoning_graphs.memory import LESSON_TEXT, LESSONS, relevant
from reasoning_graphs.nodes.guards.untrusted import as_data
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.steps.reflect import NOTE_CHARS
from reasoning_graphs.question import latest_request, question_number

STORED_CHARS = 2000
"""How much of a lesson's task, diagnosis and advice the store keeps."""
SCANNED_LESSONS = 500
"""The latest lessons ``recall`` ranks: a user's long history slows no question."""
STORE_FAILED = "The memory store failed (%s); the question goes on without it."

logger = logging.getLogger(__name__)


def save_lesson(run: RunScope, lesson: Lesson, task: str) -> Body[None]:
    """Save ``lesson``, drawn on ``task``, for the run's user; nothing without a store."""
    if run.store is None:
        return
    value = {
        "task": task[:STORED_CHARS],
        "diagnosis": lesson["diagnosis"][:STORED_CHARS],
        "advice": lesson["advice"][:STORED_CHARS],
        "score": lesson["score"],
    }
    put = PutOp(run.memory_namespace(LESSONS), _key(lesson), value)
    try:
        yield StoreOps(run.store, [put])
    except Exception as error:  # the lesson stays in the state; only its reuse is lost
        logger.warning(STORE_FAILED, error)


def make_recall(setup: AgentSetup, *, recall_lessons: int) -> Callable[..., Body[RecallUpdate]]:
    """Build the ``recall`` node: the user's earlier lessons relevant to the question."""

    def recall(state: ReflexionState) -> Body[RecallUpdate]:
        run = setup.for_run()
        k = run.option("recall_lessons", recall_lessons)
        if run.store is None or k < 1:
            return {}
        search = SearchOp(run.memory_namespace(LESSONS), limit=SCANNED_LESSONS)
        try:
            (items,) = yield StoreOps(run.store, [search])
        except Exception as error:
            logger.warning(STORE_FAILED, error)
            return {}
        task = latest_request(state["messages"])
        turn = question_number(state["messages"])
        found = _lessons(items)
        tasks = [lesson["task"] for lesson in found]
        best: list[int] = yield Blocking(partial(relevant, task, tasks, k=k))  # off the loop
        return {"remembered": [{**found[i], "turn": turn} for i in best]}

    return recall


def with_remembered(task: str, remembered: Sequence[RememberedLesson]) -> str:
    """The first attempt's request: ``task`` and the recalled lessons, each cut, as data."""
    lessons = "\n".join(
        as_data(
            LESSON_TEXT.format(
                task=lesson["task"], diagnosis=lesson["diagnosis"], advice=lesson["advice"]
            )[:NOTE_CHARS],
            source=REMEMBERED_SOURCE,
        )
        for lesson in remembered
    )
    return REMEMBERED_TASK.format(task=task, lessons=lessons)


def _lessons(items: Sequence[Item]) -> list[RememberedLesson]:
    """The stored lessons readable as such (a value another writer left malformed is skipped)."""
    found = []
    for item in items:
        value: Any = item.value
        fields = [value.get(name) for name in ("task", "diagnosis", "advice")]
        if all(isinstance(text, str) for text in fields):
            task, diagnosis, advice = (text[:STORED_CHARS] for text in fields)
            found.append(RememberedLesson(turn=0, task=task, diagnosis=diagnosis, advice=advice))
    return found


def _key(lesson: Lesson) -> str:
    """One key per thread, question and trial (a fresh one without a thread)."""
    thread = get_config().get("configurable", {}).get("thread_id") or uuid.uuid4().hex
    name = f"{thread}\0{lesson['turn']}\0{lesson['trial']}"
    return hashlib.sha256(name.encode()).hexdigest()[:32]
