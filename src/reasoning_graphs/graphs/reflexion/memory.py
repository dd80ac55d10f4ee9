"""What Reflexion keeps between trials: graded attempts and the lessons drawn from them.

Both are plain lists in the state, tagged with the question's turn, so a
checkpoint carries them across a pause or a new process, and a follow-up
question starts with a clean slate without losing the record of the earlier one.
"""

from __future__ import annotations

from collections.abc import Sequence

from reasoning_graphs.graphs.reflexion.prompts import REFLECTION_LINE
from reasoning_graphs.graphs.reflexion.state import Lesson, ReflexionState, Trial
from reasoning_graphs.nodes.turn import turn_number


def trials_of(state: ReflexionState) -> list[Trial]:
    """The current question's graded attempts, in order."""
    turn = turn_number(state["messages"])
    return [t for t in state.get("trials") or [] if t["turn"] == turn]


def lessons_of(state: ReflexionState) -> list[Lesson]:
    """The current question's reflections, in order."""
    turn = turn_number(state["messages"])
    return [lesson for lesson in state.get("reflections") or [] if lesson["turn"] == turn]


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
