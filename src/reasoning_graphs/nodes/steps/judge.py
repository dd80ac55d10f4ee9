"""A model judge: a structured score from 0 to 1 with feedback, for patterns that grade answers.

Reflexion decides from it whether to try again, and a tree search (LATS) can
rank its branches with it. The reply is typed (``with_structured_output``), so
it works with any tool-calling model and with the embedded model's grammar. A
reply that cannot be read scores 0 with feedback saying so: an unreadable
grade must never pass as a good one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.model.call import ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import RunScope
from reasoning_graphs.nodes.model.watch import SharedTokens
from reasoning_graphs.nodes.steps.prompts import JUDGE_REQUEST, JUDGE_SYSTEM
from reasoning_graphs.state import ThoughtEvent

UNREADABLE_JUDGEMENT = "The judge's reply could not be read as a score."
# A reply that only repeats these is no answer (see reasoning_graphs.nodes.guards.honest).
own_texts(UNREADABLE_JUDGEMENT)


class Judgement(BaseModel):
    """The judge's verdict on one answer (feedback first, so the score follows the reasons)."""

    feedback: str = Field(description="Concrete mistakes or gaps of the answer; short.")
    score: float = Field(description="How well the answer solves the task, from 0 to 1.")


class Evaluation(TypedDict):
    """A graded answer, as kept in the state: a score from 0 to 1 and the reasons."""

    score: float
    feedback: str


def clamp_score(score: float) -> float:
    """A score forced into 0..1 (models and user evaluators overshoot)."""
    return min(1.0, max(0.0, float(score)))


def judge(
    run: RunScope, task: str, answer: str, state: Mapping[str, Any]
) -> Body[tuple[Evaluation, ThoughtEvent]]:
    """Grade ``answer`` to ``task`` with the run's model.

    Returns:
        The evaluation and the trajectory event of the model call (real token
        counts when the model reports them).
    """
    prompt = [
        SystemMessage(JUDGE_SYSTEM),
        HumanMessage(JUDGE_REQUEST.format(task=task, answer=answer)),
    ]
    return (yield from grade(run, prompt, state))


def grade(
    run: RunScope,
    prompt: list[BaseMessage],
    state: Mapping[str, Any],
    shared_tokens: SharedTokens | None = None,
) -> Body[tuple[Evaluation, ThoughtEvent]]:
    """Ask the run's model for a :class:`Judgement` on ``prompt``; ``shared_tokens`` when the
    judge is one of a batch (:mod:`~reasoning_graphs.nodes.model.batch`).

    An unreadable reply scores 0: an unreadable grade must never pass as a good one.
    """
    request = ModelRequest(prompt=prompt, schema=Judgement, shared_tokens=shared_tokens)
    reply = yield from call_model(run, request, state)
    parsed, event = reply.parsed, reply.event
    if not isinstance(parsed, Judgement):
        return Evaluation(score=0.0, feedback=UNREADABLE_JUDGEMENT), event
    return Evaluation(score=clamp_score(parsed.score), feedback=parsed.feedback.strip()), event
