"""How far a Tree-of-Thoughts search has come, read from its search: the level under way.

The count comes from the search in the state, so a resumed search goes on
counting where it was (see :mod:`~reasoning_graphs.nodes.steps.progress`).
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.runtime import get_runtime

from reasoning_graphs.graphs.tot.search import TotSettings, frontier
from reasoning_graphs.graphs.tot.state import TotState
from reasoning_graphs.nodes.steps.progress import Progress

LEVEL_PROGRESS = "level {number} of {depth}"
EARLIER_CALLS = " ({calls} model calls in the levels before)"
"""The count is of finished levels: a level's own calls show once it ends (its ``Level``
line), so the line never reads as a live count that stands still."""


def level_progress(settings: TotSettings) -> Callable[[TotState], Progress | None]:
    """The level a ``generate`` is about to grow (the first of a new question: 1)."""

    def progress(state: TotState) -> Progress | None:
        depth = settings.for_run(get_runtime().context).depth
        search = state.get("search")
        if search is None or search["done"]:
            return Progress(1, depth, LEVEL_PROGRESS.format(number=1, depth=depth))
        number = 1 + max((t["depth"] for t in frontier(search)), default=0)
        calls = sum(cost["calls"] for cost in search["levels"])
        text = LEVEL_PROGRESS.format(number=number, depth=depth)
        return Progress(number, depth, text + (EARLIER_CALLS.format(calls=calls) if calls else ""))

    return progress
