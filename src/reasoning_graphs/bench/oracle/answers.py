"""Which answer the oracle gives: the task's ``draft`` until feedback shows, then the gold.

A pattern with no feedback loop ends on its first answer, so a task with a
plausible wrong draft measures whether a pattern's feedback (a failed
evaluation, a lesson) corrects it. Patterns that reason before answering
(Chain-of-Thought, from the task's worked ``reasoning``) or sample and judge
alternatives (LATS) reach the gold answer their own way.
"""

from __future__ import annotations

from reasoning_graphs.bench.suite import Task


def final_answer(task: Task, *, feedback: bool = False) -> str:
    """The draft before feedback, the gold answer after it (or when there is no draft)."""
    return task.answer if task.draft is None or feedback else task.draft
