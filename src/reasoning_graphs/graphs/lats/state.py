"""The state of a LATS run: the agent state plus the search tree."""

from __future__ import annotations

from typing_extensions import NotRequired

from reasoning_graphs.graphs.lats.tree import LatsTree
from reasoning_graphs.state import AgentState

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


def selected_leaf(state: LatsState) -> int:
    """The leaf ``select`` chose: what ``expand``, ``act`` and ``evaluate`` work on."""
    leaf = state["selected"]
    if leaf is None:
        raise ValueError(NOTHING_SELECTED)
    return leaf
