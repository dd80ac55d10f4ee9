"""Run options of Tree-of-Thoughts: the shared ones plus the search's shape, shown in Studio;
the declaration of its own options (:mod:`reasoning_graphs.pattern_options`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from reasoning_graphs.context import AgentContext
from reasoning_graphs.graphs.tot.search import Evaluator, Generator
from reasoning_graphs.option_bounds import LowerOnly, OneOf
from reasoning_graphs.pattern_options import own_option


@dataclass(kw_only=True)
class TotContext(AgentContext):
    """Per-run options of Tree-of-Thoughts; counts may be lowered, not raised."""

    breadth: int | None = own_option(
        "Candidate thoughts generated from each kept state.", bound=LowerOnly(least=1), default=3
    )
    depth: int | None = own_option(
        "Levels of thoughts before the answer.", bound=LowerOnly(least=1), default=3
    )
    beam: int | None = own_option(
        "States kept per level, best first.", bound=LowerOnly(least=1), default=1
    )
    votes: int | None = own_option(
        "Votes cast per level by the 'vote' evaluator.", bound=LowerOnly(least=1), default=3
    )
    generator: Generator | None = own_option(
        "'propose' (one call lists several next thoughts) or 'sample' (one call per thought).",
        bound=OneOf(get_args(Generator)),
        default="propose",
    )
    evaluator: Evaluator | None = own_option(
        "'value' (each candidate rated sure, likely or impossible) or 'vote' (calls vote for "
        "the most promising).",
        bound=OneOf(get_args(Evaluator)),
        default="value",
    )
