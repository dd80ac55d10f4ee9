"""The state of a Reflexion run: the agent state plus the trials and lessons."""

from __future__ import annotations

from typing import Annotated, Literal

from typing_extensions import TypedDict

from reasoning_graphs.state import AgentState, AgentUpdate, Outcome, extend_record


class Attempt(TypedDict):
    """The latest attempt's answer and how its ReAct run ended, before grading."""

    answer: str
    outcome: Outcome


class Trial(TypedDict):
    """A graded attempt."""

    turn: int
    trial: int
    answer: str
    outcome: Outcome
    score: float
    feedback: str


class Lesson(TypedDict):
    """A self-reflection on a trial that fell short: what went wrong, what to do instead."""

    turn: int
    trial: int
    score: float
    diagnosis: str
    advice: str


class RememberedLesson(TypedDict):
    """A lesson drawn on an earlier question (on any thread of the same user) that the
    store ranked relevant to this one, for its first attempt."""

    turn: int
    task: str
    diagnosis: str
    advice: str


class EvaluationEvent(TypedDict):
    """A trial's grade, as the trajectory records it."""

    kind: Literal["evaluation"]
    turn: int
    trial: int
    score: float


class ReflexionState(AgentState):
    """The agent state plus the trials of the current question.

    Attributes:
        attempt: The latest attempt's answer, waiting to be graded.
        trials: Every graded attempt with its score and feedback (tagged with
            its question's turn).
        reflections: The lessons drawn from trials that fell short, given to
            every later attempt of the same question.
        remembered: Lessons of earlier questions recalled from the store, given to
            the question's first attempt.
    """

    attempt: Attempt
    trials: Annotated[list[Trial], extend_record]
    reflections: Annotated[list[Lesson], extend_record]
    remembered: Annotated[list[RememberedLesson], extend_record]


class RecallUpdate(AgentUpdate, total=False):
    """What ``recall`` writes: the earlier lessons relevant to the question."""

    remembered: list[RememberedLesson]


class AttemptUpdate(AgentUpdate, total=False):
    """What ``act`` writes: the attempt's answer, waiting to be graded."""

    attempt: Attempt


class EvaluateUpdate(AgentUpdate, total=False):
    """What ``evaluate`` writes: the graded trial, and the answer when the trials end."""

    trials: list[Trial]


class ReflectUpdate(AgentUpdate, total=False):
    """What ``reflect`` writes: the lesson drawn from the trial that fell short."""

    reflections: list[Lesson]
