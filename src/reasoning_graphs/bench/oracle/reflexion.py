"""Reflexion: attempts through the ReAct loop, graded by the task's scorer, with lessons.

An attempt makes the gold calls and answers with the task's ``draft`` while
its request carries no lessons of earlier trials, and with the gold answer
once it does. The judge grades from the scorer (a grader function, such as
the bench's unit tests, makes no model call at all), and a reflection names
the failure and asks for the correction.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage
from pydantic import BaseModel

from reasoning_graphs.bench.oracle.answers import final_answer
from reasoning_graphs.bench.oracle.judging import judge_answer
from reasoning_graphs.bench.oracle.prompt import (
    OracleError,
    Prompt,
    literal_between,
    template_fields,
)
from reasoning_graphs.bench.oracle.react import loop_reply
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.graphs.reflexion.prompts import ATTEMPT_TASK
from reasoning_graphs.graphs.reflexion.reflect import Reflection
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.nodes.steps.prompts import JUDGE_REQUEST

LESSONS = literal_between(ATTEMPT_TASK, "task", "reflections").strip()
"""What an attempt's request carries once earlier trials fell short."""

DIAGNOSIS = "The answer did not pass the evaluation."
ADVICE = "Give the corrected answer that the feedback asks for."
UNREADABLE_JUDGE = "the Reflexion judge prompt no longer fits its JUDGE_REQUEST template"


def has_feedback(prompt: Prompt) -> bool:
    """Whether the attempt's request carries lessons from earlier trials."""
    return any(LESSONS in text for text in prompt.human_texts())


def attempt(task: Task, prompt: Prompt) -> AIMessage | str:
    """A trial's ReAct turn: the gold calls, then the draft before feedback, the gold after."""
    return loop_reply(task, prompt, final_answer(task, feedback=has_feedback(prompt)))


def judge(task: Task, prompt: Prompt) -> Judgement:
    """The grade of the answer the judge's request shows."""
    fields = template_fields(JUDGE_REQUEST, prompt.last_human())
    if fields is None:
        raise OracleError(UNREADABLE_JUDGE)
    return judge_answer(task, fields["answer"])


def reply(task: Task, prompt: Prompt) -> BaseModel | AIMessage | str:
    """A grade, a reflection, or an attempt's turn."""
    if prompt.binds(Judgement):
        return judge(task, prompt)
    if prompt.binds(Reflection):
        return Reflection(diagnosis=DIAGNOSIS, advice=ADVICE)
    return attempt(task, prompt)
