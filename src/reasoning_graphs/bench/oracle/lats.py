"""LATS: samples that follow the gold path, judged by the task's scorer.

The samples of an expansion share one prompt, so the oracle tells them apart
by their number: the first sample takes the next gold step (or gives the gold
answer), and at the root the others give the alternative a sampled model
would — the task's ``draft``, or an answer without looking anything up — which
the judge scores 0, so the search has a wrong branch to pass over. Further
down the samples agree and collapse into one child, which keeps a deep chain
within the question's model-call budget. The judge reads the branch from its
request: a final answer is scored by the scorer, unfinished steps by how far
along the gold path they are.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage

from reasoning_graphs.bench.oracle.judging import judge_answer, judge_unfinished
from reasoning_graphs.bench.oracle.progress import gold_progress
from reasoning_graphs.bench.oracle.prompt import (
    OracleError,
    Prompt,
    block_observation,
    data_blocks,
    literal_between,
)
from reasoning_graphs.bench.oracle.react import loop_reply
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.graphs.lats.prompts import FINAL_ANSWER, LATS_JUDGE_REQUEST, NOT_FINISHED
from reasoning_graphs.nodes.guards.untrusted import CLOSE
from reasoning_graphs.nodes.steps.judge import Judgement

UNCHECKED_ANSWER = "I cannot say without checking."
"""The root's alternative for a task without a draft."""

ANSWER_MARK = literal_between(LATS_JUDGE_REQUEST, "steps", "ending") + FINAL_ANSWER.split("{")[0]
"""What comes before the final answer of a finished branch in the judge's request."""
UNREADABLE_JUDGE = "the LATS judge prompt no longer shows its final answer as FINAL_ANSWER"


def expansion(task: Task, prompt: Prompt) -> AIMessage | str:
    """One sample of the next step: the gold step, or at the root the alternative."""
    at_root = not any(isinstance(message, AIMessage) for message in prompt.messages)
    if at_root and prompt.repeat > 0:
        return task.draft if task.draft is not None else UNCHECKED_ANSWER
    return loop_reply(task, prompt, task.answer)


def judge(task: Task, prompt: Prompt) -> Judgement:
    """The value of the branch the judge's request shows."""
    text = prompt.last_human()
    if text.endswith(NOT_FINISHED):
        observed = [block_observation(source, body) for source, body in data_blocks(text)]
        return judge_unfinished(gold_progress(task, observed))
    steps_end = max(text.rfind(CLOSE), 0)
    start = text.find(ANSWER_MARK, steps_end)
    if start < 0:
        raise OracleError(UNREADABLE_JUDGE)
    return judge_answer(task, text[start + len(ANSWER_MARK) :])


def reply(task: Task, prompt: Prompt) -> Judgement | AIMessage | str:
    """A branch's value, or a sample of the next step (the closing call answers)."""
    return judge(task, prompt) if prompt.binds(Judgement) else expansion(task, prompt)
