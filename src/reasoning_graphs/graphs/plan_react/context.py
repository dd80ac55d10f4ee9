"""Run options of Plan-in-context ReAct: the ReAct loop's plus its bound on rewrites (Studio)."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import ReactLoopContext, run_option
from reasoning_graphs.option_bounds import LowerOnly


@dataclass(kw_only=True)
class PlanReactContext(ReactLoopContext):
    """Per-run options of Plan-in-context ReAct; counts may be lowered, not raised."""

    max_replans: int | None = run_option(
        "Rewrites of the plan per question; past them the loop goes on with the plan it "
        "has. May lower the graph's, not raise it.",
        bound=LowerOnly(least=0),
    )
