"""Run options of Plan-in-context ReAct: the ReAct loop's plus its bound on rewrites (Studio);
the declaration of its own option (:mod:`reasoning_graphs.pattern_options`)."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import ReactLoopContext
from reasoning_graphs.option_bounds import LowerOnly
from reasoning_graphs.pattern_options import own_option


@dataclass(kw_only=True)
class PlanReactContext(ReactLoopContext):
    """Per-run options of Plan-in-context ReAct; counts may be lowered, not raised."""

    max_replans: int | None = own_option(
        "Rewrites of the plan per question; past them the loop goes on with the plan it has.",
        bound=LowerOnly(least=0),
        default=2,
    )
