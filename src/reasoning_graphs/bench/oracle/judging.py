"""The oracle as a judge: grades from the task's own scorer, never from a guess.

A final answer scores 1.0 when the scorer calls it correct and 0.0 otherwise,
so a wrong answer never passes a pattern's threshold (a half-passing draft is
still wrong). An unfinished branch on the gold path scores part of
:data:`UNFINISHED_CEILING` by its progress; off the path it scores 0.
"""

from __future__ import annotations

from reasoning_graphs.bench.oracle.progress import Progress
from reasoning_graphs.bench.scorers import score
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.nodes.steps.judge import Judgement

UNFINISHED_CEILING = 0.6
"""The score of an unfinished branch with every gold step done: below any sane threshold,
above every wrong answer."""

CORRECT = "Correct."
WRONG = "Wrong: {detail}"
ON_PATH = "On the right track: {done} of {total} needed steps done, no answer yet."
OFF_PATH = "Off the task: {count} step(s) do not help answer it."


def judge_answer(task: Task, answer: str) -> Judgement:
    """The verdict on a final answer, from the task's scorer."""
    verdict = score(task, answer)
    if verdict.correct:
        return Judgement(feedback=CORRECT, score=1.0)
    return Judgement(feedback=WRONG.format(detail=verdict.detail or "not the answer"), score=0.0)


def judge_unfinished(progress: Progress) -> Judgement:
    """The verdict on steps taken without an answer yet."""
    if progress.off_path:
        return Judgement(feedback=OFF_PATH.format(count=progress.off_path), score=0.0)
    feedback = ON_PATH.format(done=progress.done, total=len(progress.steps))
    return Judgement(feedback=feedback, score=round(UNFINISHED_CEILING * progress.fraction, 3))
