"""Memory across threads: whose it is, where in the store it lives, and what is relevant.

A run keeps what should outlive its thread in the graph's LangGraph store, under
``("reasoning_graphs", <user>, <kind>)``: Reflexion's lessons under ``"lessons"``,
the ``remember`` tool's notes under ``"notes"``. The user is the run's
``memory_user`` option, else the graph's (default ``"default"``); on a server that
signs users in, the signed-in user, whatever the run asks for. A name a client
chooses is checked, never rewritten (:class:`~reasoning_graphs.option_bounds.PlainName`),
and a signed-in user's id is encoded one-to-one, so two users never share memory
and no name becomes a path or a second namespace level.

What is relevant is ranked by BM25 over the texts, with a floor relative to the
query's own score, so that an unrelated question gets nothing.

Examples:
    >>> namespace("alice", "lessons")
    ('reasoning_graphs', 'alice', 'lessons')
    >>> relevant("moons of Mars", ["How many moons has Mars?", "Who wrote Hamlet?"], k=2)
    [0]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.config import get_config

from reasoning_graphs.tools.builtins.search_docs import Passage, PassageIndex

ROOT = "reasoning_graphs"
"""The first label of every namespace this package writes."""
AUTH_USER_KEY = "langgraph_auth_user_id"
"""Where LangGraph Server puts the id of the user its auth handler signed in."""
RELEVANCE_FLOOR = 0.3
"""A text is relevant when its BM25 score is at least this share of the query's score
against itself: most of the query's distinctive words, weighted by rarity, are in it."""
QUERY = "\0query"
LESSONS = "lessons"
"""The kind of Reflexion's lessons (``task``, ``diagnosis``, ``advice``)."""
NOTES = "notes"
"""The kind of the ``remember`` tool's notes (``text``)."""
LESSON_TEXT = "Task: {task}\nWhat went wrong: {diagnosis}\nNext time: {advice}"
"""A lesson as a model or a person reads it."""

_LABEL = re.compile(r"[A-Za-z0-9_@-]+")
_KEPT = re.compile(r"[A-Za-z0-9_-]")
BAD_LABEL = "Memory namespace label {label!r} must be letters, digits, '_', '@' or '-'."


def lesson_text(value: Any) -> str | None:
    """A stored lesson's text (:data:`LESSON_TEXT`), or ``None`` for a value that is not one
    (another writer may leave anything in a store)."""
    if not isinstance(value, Mapping):
        return None
    fields = {name: value.get(name) for name in ("task", "diagnosis", "advice")}
    if not all(isinstance(text, str) for text in fields.values()):
        return None
    return LESSON_TEXT.format(**fields)


def namespace(user: str, kind: str) -> tuple[str, ...]:
    """The store namespace of ``user``'s memories of ``kind``."""
    for label in (user, kind):
        if not _LABEL.fullmatch(label):
            raise ValueError(BAD_LABEL.format(label=label))
    return (ROOT, user, kind)


def run_user(chosen: str) -> str:
    """The user whose memory the current run uses: the signed-in user's (encoded) when the
    server authenticated one, else ``chosen`` (the run's or the graph's ``memory_user``)."""
    try:
        signed_in = get_config().get("configurable", {}).get(AUTH_USER_KEY)
    except RuntimeError:  # outside a run
        return chosen
    return auth_label(str(signed_in)) if signed_in else chosen


def auth_label(user_id: str) -> str:
    """``user_id`` as a namespace label, one-to-one: letters, digits, ``_`` and ``-`` stay,
    every other character becomes ``@`` and its UTF-8 bytes in hex (``a.b`` → ``a@2eb``)."""
    return "".join(
        char if _KEPT.fullmatch(char) else "".join(f"@{byte:02x}" for byte in char.encode())
        for char in user_id
    )


def chosen_user(context: Any, built: str) -> str:
    """The run's ``memory_user`` option (its context is a dataclass or a mapping), else the
    graph's ``built`` one. The run's value was checked when the run started."""
    if isinstance(context, Mapping):
        value = context.get("memory_user")
    else:
        value = getattr(context, "memory_user", None)
    return value or built


def relevant(
    query: str, texts: Sequence[str], *, k: int, floor: float = RELEVANCE_FLOOR
) -> list[int]:
    """The indices of at most ``k`` of ``texts`` that BM25 ranks relevant to ``query``, best
    first: those scoring at least ``floor`` times the query's score against itself."""
    if k < 1 or not texts:
        return []
    passages = [Passage(file=str(i), text=text) for i, text in enumerate(texts)]
    index = PassageIndex([*passages, Passage(file=QUERY, text=query)])
    hits = index.search(query, len(passages) + 1)
    own = next((score for passage, score in hits if passage.file == QUERY), 0.0)
    if own <= 0:
        return []  # the query has no searchable word
    found = [int(p.file) for p, score in hits if p.file != QUERY and score >= floor * own]
    return found[:k]
