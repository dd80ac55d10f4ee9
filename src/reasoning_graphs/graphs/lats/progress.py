"""How far a LATS search has come, read from its tree: the expansion under way and the tree size.

The count comes from the tree in the state, not from the process, so a
resumed search goes on counting where it was (see
:mod:`~reasoning_graphs.nodes.steps.progress`).
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.runtime import get_runtime

from reasoning_graphs.graphs.lats.state import LatsState
from reasoning_graphs.graphs.lats.tree import SearchSettings, expansions
from reasoning_graphs.nodes.steps.progress import Progress

SEARCH_PROGRESS = "expansion {number} of {limit} (tree: {size} nodes)"


def search_progress(settings: SearchSettings) -> Callable[[LatsState], Progress | None]:
    """The progress of the search in a state, for the steps that work on the selected leaf:
    the expansion under way counts as done once its children are in the tree."""

    def progress(state: LatsState) -> Progress | None:
        tree, leaf = state.get("tree"), state.get("selected")
        if tree is None or leaf is None:
            return None
        limit = settings.for_run(get_runtime().context).max_expansions
        number = expansions(tree) + (0 if tree["nodes"][leaf]["expanded"] else 1)
        text = SEARCH_PROGRESS.format(number=number, limit=limit, size=len(tree["nodes"]))
        return Progress(number, limit, text)

    return progress
