"""``remember`` and ``recall``: notes the model keeps in the run's store, across threads.

``recall`` searches the user's notes and Reflexion's lessons alike (a lesson reads as its
task, what went wrong and what to do next time), ranked together.

Both read the store from the run (the graph's, or the server's) and the namespace
from the run's user (:mod:`reasoning_graphs.memory`), so a note written on one
thread is found on any later thread of the same user and never on another's. A
run without a store is not offered them (``RunScope.usable_specs``); called anyway,
the observation says that the run has no store (:mod:`reasoning_graphs.tools.injection`).
``remember`` keys a note by its call id, which stays the same across a resume, so a
call repeated after a crash writes the note once. ``recall`` only reads, so its calls
may run alongside others.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from typing import Annotated, Any

from langchain_core.tools import InjectedToolCallId, StructuredTool
from langgraph.prebuilt import InjectedStore
from langgraph.runtime import get_runtime
from langgraph.store.base import Item
from pydantic import Field

from reasoning_graphs.context import DEFAULT_MEMORY_USER
from reasoning_graphs.memory import (
    LESSONS,
    NOTES,
    chosen_user,
    lesson_text,
    namespace,
    relevant,
    run_user,
)
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

MAX_NOTE_CHARS = 1000
MAX_RESULTS = 10
SCANNED_NOTES = 500
"""The latest notes a recall ranks: a model that floods its memory slows no later run."""

REMEMBER = (
    "Save a short note (a fact, a preference, a lesson) that later conversations with "
    "this user can recall. Not for what this conversation already says."
)
RECALL = (
    "Search the notes saved with remember, and the lessons learnt, in earlier "
    "conversations with this user, by keywords. Not for documents or the web."
)
NOTE_HELP = f"The note, at most {MAX_NOTE_CHARS} characters, self-contained."
QUERY_HELP = "Keywords the note should contain, e.g. 'preferred units'."
K_HELP = f"How many notes to return (1 to {MAX_RESULTS})."
SAVED = "Remembered."
NOTHING_SAVED = "Nothing has been remembered yet."
NO_MATCH = "No remembered note matches {query!r}."
NOTE_LINE = "[{rank}] {text}"
LESSON_LINE = "[{rank}] (a lesson) {text}"


def memory_tools(user: str = DEFAULT_MEMORY_USER) -> list[ToolSpec]:
    """``remember`` (stateful, not dangerous) and ``recall`` (read-only); ``user``: the
    graph's ``memory_user``, which a run's option and a signed-in user replace."""
    return [_remember(user), _recall(user)]


def _namespace(user: str, kind: str = NOTES) -> tuple[str, ...]:
    """The namespace of the run's user's memories of ``kind``."""
    runtime = get_runtime()
    context = runtime.context if runtime is not None else None
    return namespace(run_user(chosen_user(context, user)), kind)


def _remember(user: str) -> ToolSpec:
    def run(
        note: Annotated[str, Field(min_length=1, max_length=MAX_NOTE_CHARS, description=NOTE_HELP)],
        store: Annotated[Any, InjectedStore()],
        call_id: Annotated[str, InjectedToolCallId],
    ) -> str:
        """Save ``note`` under a key made from the call id."""
        store.put(_namespace(user), _key(call_id), {"text": note})
        return SAVED

    async def arun(
        note: str,
        store: Annotated[Any, InjectedStore()],
        call_id: Annotated[str, InjectedToolCallId],
    ) -> str:
        await store.aput(_namespace(user), _key(call_id), {"text": note})
        return SAVED

    tool = StructuredTool.from_function(
        func=run, coroutine=arun, name="remember", description=REMEMBER
    )
    return tool_spec(tool, dangerous=False, concurrency_safe=False)


def _recall(user: str) -> ToolSpec:
    def run(
        query: Annotated[str, Field(description=QUERY_HELP)],
        store: Annotated[Any, InjectedStore()],
        k: Annotated[int, Field(ge=1, le=MAX_RESULTS, description=K_HELP)] = 3,
    ) -> str:
        """The notes and lessons BM25 ranks best for ``query``."""
        notes, lessons = (
            store.search(_namespace(user, kind), limit=SCANNED_NOTES) for kind in (NOTES, LESSONS)
        )
        return _found(notes, lessons, query, k)

    async def arun(
        query: str,
        store: Annotated[Any, InjectedStore()],
        k: int = 3,
    ) -> str:
        notes, lessons = await asyncio.gather(
            *(
                store.asearch(_namespace(user, kind), limit=SCANNED_NOTES)
                for kind in (NOTES, LESSONS)
            )
        )
        return await asyncio.to_thread(_found, notes, lessons, query, k)  # indexing: off the loop

    tool = StructuredTool.from_function(func=run, coroutine=arun, name="recall", description=RECALL)
    return tool_spec(tool, dangerous=False, concurrency_safe=True)


def _found(notes: list[Item] | Any, lessons: list[Item] | Any, query: str, k: int) -> str:
    """The best notes and lessons for ``query``, ranked together, one line each."""
    entries = [(NOTE_LINE, str(item.value.get("text", ""))) for item in notes or []]
    for item in lessons or []:
        text = lesson_text(item.value)
        if text is not None:
            entries.append((LESSON_LINE, text))
    if not entries:
        return NOTHING_SAVED
    best = relevant(query, [text for _, text in entries], k=k, floor=0.0)
    if not best:
        return NO_MATCH.format(query=query)
    return "\n".join(
        entries[i][0].format(rank=n, text=entries[i][1]) for n, i in enumerate(best, start=1)
    )


def _key(call_id: str | None) -> str:
    """The note's key: its call id, hashed to a fixed length (the id is the model's text)."""
    return hashlib.sha256((call_id or uuid.uuid4().hex).encode()).hexdigest()[:32]
