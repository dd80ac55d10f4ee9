"""Which answer the oracle gives: the task's ``draft`` until feedback shows, then the gold.

A pattern with no feedback loop ends on its first answer, so a task with a
plausible wrong draft measures whether a pattern's feedback (a failed
evaluation, a lesson, a judge's low score for a sampled alternative) corrects
it. Reasoning alone does not: Chain-of-Thought keeps the draft. This is the
oracle's one assumption about a model: it errs once in the way the draft shows
and corrects itself when, and only when, it is told it was wrong.
"""

from __future__ import annotations

from reasoning_graphs.bench.suite import Task


def final_answer(task: Task, *, feedback: bool = False) -> str:
    """The draft before feedback, the gold answer after it (or when there is no draft)."""
    return task.answer if task.draft is None or feedback else task.draft
