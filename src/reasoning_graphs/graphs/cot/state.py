"""The state of a Chain-of-Thought run: the agent state plus its samples and vote."""

from __future__ import annotations

from reasoning_graphs.graphs.cot.answer import Sample
from reasoning_graphs.state import AgentState, AgentUpdate


class CotState(AgentState):
    """The agent state plus the latest question's reasoning.

    Attributes:
        samples: Each chain of thought with the answer read from it.
        answer: The chosen answer (the majority's, with self-consistency).
        agreement: How many samples gave the chosen answer, e.g. ``"3/5"``.
    """

    samples: list[Sample]
    answer: str
    agreement: str


class ReasonUpdate(AgentUpdate, total=False):
    """What ``reason`` writes: the samples, the vote's answer and agreement, and the answer."""

    samples: list[Sample]
    answer: str
    agreement: str
