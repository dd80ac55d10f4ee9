"""The state of a Tree-of-Thoughts run: the agent state plus the search of the question."""

from __future__ import annotations

from typing_extensions import NotRequired

from reasoning_graphs.graphs.tot.search import Search
from reasoning_graphs.state import AgentState, AgentUpdate


class TotState(AgentState):
    """The agent state plus the current question's search.

    Attributes:
        search: Every thought tried for the question, as plain data (see
            :class:`~reasoning_graphs.graphs.tot.search.Thought`); ``generate``
            plants it on the question's first level.
    """

    search: NotRequired[Search]


class SearchUpdate(AgentUpdate, total=False):
    """What ``generate``, ``evaluate`` and ``select`` write: the search as they grew, scored
    or pruned it, with their events (and ``select`` the outcome that ends the search)."""

    search: Search
