"""Reflexion's memory: the current question's graded trials, what each did, and the lessons.

The trials and lessons are lists in the state (see :mod:`.state`), and each
attempt's tool calls are in the trajectory, tagged with its trial: all
outlive pauses and restarts, and a follow-up question starts with a clean
slate (:func:`~reasoning_graphs.question.this_question`). The lessons are
what the next attempt and the next reflection read; a trial's tool calls are
what its reflection reads.
"""

from __future__ import annotations

from collections.abc import Sequence

from reasoning_graphs.graphs.reflexion.prompts import REFLECTION_LINE
from reasoning_graphs.graphs.reflexion.state import Lesson, ReflexionState, Trial
from reasoning_graphs.question import this_question
from reasoning_graphs.state import ActionEvent


def trials_so_far(state: ReflexionState) -> list[Trial]:
    """The current question's graded attempts, in order."""
    return this_question(state.get("trials"), state["messages"])


def lessons_so_far(state: ReflexionState) -> list[Lesson]:
    """The current question's lessons, in order."""
    return this_question(state.get("reflections"), state["messages"])


def trial_actions(state: ReflexionState, trial: int) -> list[ActionEvent]:
    """The tool calls one trial of the current question made, in order, with their results."""
    events = this_question(state.get("trajectory"), state["messages"])
    return [event for event in events if event["kind"] == "action" and event.get("trial") == trial]


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
