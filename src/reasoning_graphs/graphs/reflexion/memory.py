"""Reflexion's memory: the current question's graded trials and the lessons drawn from them.

Both are lists in the state (see :mod:`.state`) that outlive pauses and
restarts; a follow-up question starts with a clean slate
(:func:`~reasoning_graphs.nodes.turn.this_question`). The lessons are
what the next attempt and the next reflection read.
"""

from __future__ import annotations

from collections.abc import Sequence

from reasoning_graphs.graphs.reflexion.prompts import REFLECTION_LINE
from reasoning_graphs.graphs.reflexion.state import Lesson, ReflexionState, Trial
from reasoning_graphs.nodes.turn import this_question


def trials_so_far(state: ReflexionState) -> list[Trial]:
    """The current question's graded attempts, in order."""
    return this_question(state.get("trials"), state["messages"])


def lessons_so_far(state: ReflexionState) -> list[Lesson]:
    """The current question's lessons, in order."""
    return this_question(state.get("reflections"), state["messages"])


def describe_lessons(lessons: Sequence[Lesson]) -> str:
    """Lessons as the next attempt and the next reflection read them: one line each."""
    return "\n".join(
        REFLECTION_LINE.format(
            trial=lesson["trial"],
            score=lesson["score"],
            diagnosis=lesson["diagnosis"],
            advice=lesson["advice"],
        )
        for lesson in lessons
    )
