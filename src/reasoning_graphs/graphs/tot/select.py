"""``select``: keep the level's best states, backtrack when none is left, and decide what next.

The best ``beam`` candidates become the frontier and the rest wait in reserve;
when the evaluator judged every candidate impossible, the frontier comes from
the reserve instead (see :func:`~reasoning_graphs.graphs.tot.search.choose_beam`).
The search is done when a kept thought completes the solution or the frontier
reaches the depth; it stops, incomplete, when nothing is left to grow or a
budget is spent. Each level leaves a ``tot_level`` event with its model calls
and the question's total so far, so the cost (breadth times depth, plus the
evaluator's calls) reads off the trajectory.
"""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import TypedDict

from reasoning_graphs.graphs.tot.search import (
    LevelCost,
    Search,
    TotSettings,
    best_solution,
    choose_beam,
    frontier,
)
from reasoning_graphs.graphs.tot.state import SearchUpdate, TotState
from reasoning_graphs.nodes.guards.budget import budget_stop
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.question import model_calls_used, question_number
from reasoning_graphs.state import Node, Outcome

NOTHING_LEFT = "no thought of the level could be kept, and none was left in reserve to go back to"
UNJUDGED = (
    "no evaluation of level {level}'s thoughts could be read, so none of them could be kept "
    "on merit; the answer rests on the levels before"
)


class LevelEvent(TypedDict):
    """One level of the search, as the trajectory records it.

    Attributes:
        turn: The question.
        level: The depth of the level's candidates.
        calls: Model calls the level made (generating and evaluating).
        total: Model calls of the question so far.
        kept: The ids of the states kept as the next frontier, best first.
        backtracked: Every candidate was dropped; the frontier came from reserve.
    """

    kind: Literal["tot_level"]
    turn: int
    level: int
    calls: int
    total: int
    kept: list[int]
    backtracked: bool


def make_select(setup: AgentSetup, settings: TotSettings) -> Node[TotState]:
    """Build the ``select`` node."""

    def select(state: TotState) -> SearchUpdate:
        run = setup.for_run()
        tot = settings.for_run(run.context)
        search = state["search"]
        level = 1 + max((t["depth"] for t in frontier(search)), default=0)
        step = choose_beam(search, tot.beam)
        total = model_calls_used(state)
        calls = total - sum(cost["calls"] for cost in search["levels"])
        event = LevelEvent(
            kind="tot_level",
            turn=question_number(state["messages"]),
            level=level,
            calls=calls,
            total=total,
            kept=step.kept,
            backtracked=step.backtracked,
        )
        solution = best_solution(step.search, step.kept)
        deepest = min((step.search["thoughts"][i]["depth"] for i in step.kept), default=0)
        done = solution is not None or (bool(step.kept) and deepest >= tot.depth)
        outcome: Outcome | None = None
        if step.unjudged:
            outcome = {"status": "incomplete", "reason": UNJUDGED.format(level=level)}
        elif not step.kept:
            outcome = {"status": "incomplete", "reason": NOTHING_LEFT}
        elif not done:
            outcome = budget_stop(state, run.limits)
        grown: Search = {
            **step.search,
            "levels": [*search["levels"], LevelCost(level=level, calls=calls)],
            "solution": solution,
            "done": done,
        }
        trajectory: list[Any] = [event]
        return {"search": grown, "trajectory": trajectory, "outcome": outcome}

    return select
