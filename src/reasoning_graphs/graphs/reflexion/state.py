"""The state of a Reflexion run: the agent state plus the trials and lessons."""

from __future__ import annotations

import operator
from typing import Annotated

from reasoning_graphs.graphs.reflexion.trials import Attempt, Lesson, Trial
from reasoning_graphs.state import AgentState


class ReflexionState(AgentState):
    """The agent state plus the trials of the current question.

    Attributes:
        attempt: The latest attempt's answer, waiting to be graded.
        trials: Every graded attempt with its score and feedback (tagged with
            its question's turn).
        reflections: The lessons drawn from trials that fell short, given to
            every later attempt of the same question.
    """

    attempt: Attempt | None
    trials: Annotated[list[Trial], operator.add]
    reflections: Annotated[list[Lesson], operator.add]
