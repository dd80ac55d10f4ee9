"""Run options of Tree-of-Thoughts: the shared ones plus the search's shape, shown in Studio."""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from reasoning_graphs.context import AgentContext, run_option
from reasoning_graphs.graphs.tot.search import Evaluator, Generator
from reasoning_graphs.option_bounds import LowerOnly, OneOf

LOWER_ONLY = " May lower the graph's, not raise it."


@dataclass(kw_only=True)
class TotContext(AgentContext):
    """Per-run options of Tree-of-Thoughts; counts may be lowered, not raised."""

    breadth: int | None = run_option(
        "Candidate thoughts generated from each kept state." + LOWER_ONLY,
        bound=LowerOnly(least=1),
    )
    depth: int | None = run_option(
        "Levels of thoughts before the answer." + LOWER_ONLY, bound=LowerOnly(least=1)
    )
    beam: int | None = run_option(
        "States kept per level, best first." + LOWER_ONLY, bound=LowerOnly(least=1)
    )
    votes: int | None = run_option(
        "Votes cast per level by the 'vote' evaluator." + LOWER_ONLY, bound=LowerOnly(least=1)
    )
    generator: Generator | None = run_option(
        "'propose' (one call lists several next thoughts) or 'sample' (one call per thought).",
        bound=OneOf(get_args(Generator)),
    )
    evaluator: Evaluator | None = run_option(
        "'value' (each candidate rated sure, likely or impossible) or 'vote' (calls vote for "
        "the most promising).",
        bound=OneOf(get_args(Evaluator)),
    )
