"""The state of a LATS run: the agent state plus the search tree."""

from __future__ import annotations

from typing import Literal

from typing_extensions import NotRequired, TypedDict

from reasoning_graphs.graphs.lats.tree import LatsTree
from reasoning_graphs.state import AgentState, AgentUpdate

NOTHING_SELECTED = "select chose no leaf: only finish may run after it"


class LatsState(AgentState):
    """The agent state plus the search tree of the current question.

    Attributes:
        tree: Every node tried for the question, as plain data (see
            :class:`~reasoning_graphs.graphs.lats.tree.LatsNode`); ``select``
            plants it before any other node runs.
        selected: The leaf being expanded in this iteration; ``None`` when no
            branch can grow and the search ends.
    """

    tree: NotRequired[LatsTree]
    selected: NotRequired[int | None]


class SelectUpdate(AgentUpdate, total=False):
    """What ``select`` writes: the question's tree (planted on its first run) and the leaf to
    expand, or the outcome when no branch can grow."""

    tree: LatsTree
    selected: int | None


class TreeUpdate(AgentUpdate, total=False):
    """What ``expand``, ``act``, ``evaluate`` and ``backpropagate`` write: the tree as they
    grew, ran, scored or backed it up, with their events."""

    tree: LatsTree


class EvaluationEvent(TypedDict):
    """The judge's verdict on one new child, as the trajectory records it.

    Attributes:
        turn, step: The question and the expansion the child came from.
        node: The child's id in the tree.
        score: The judge's score of the trajectory ending at the child (0..1).
        feedback: The judge's short reason.
        terminal: The child is a final answer.
    """

    kind: Literal["evaluation"]
    turn: int
    step: int
    node: int
    score: float
    feedback: str
    terminal: bool


def selected_leaf(state: LatsState) -> int:
    """The leaf ``select`` chose: what ``expand``, ``act`` and ``evaluate`` work on."""
    leaf = state["selected"]
    if leaf is None:
        raise ValueError(NOTHING_SELECTED)
    return leaf
