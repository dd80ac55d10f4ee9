"""The state of a LATS run: the agent state plus the search tree."""

from __future__ import annotations

from reasoning_graphs.graphs.lats.tree import LatsTree
from reasoning_graphs.state import AgentState


class LatsState(AgentState):
    """The agent state plus the search tree of the current question.

    Attributes:
        tree: Every node tried for the question, as plain data (see
            :class:`~reasoning_graphs.graphs.lats.tree.LatsNode`).
        selected: The leaf being expanded in this iteration.
    """

    tree: LatsTree | None
    selected: int | None
