"""Run options of LATS: the shared ones plus the search's width, length, depth and goal, shown
in Studio; the declaration of its own options (:mod:`reasoning_graphs.pattern_options`)."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import AgentContext
from reasoning_graphs.option_bounds import Fraction, LowerOnly
from reasoning_graphs.pattern_options import own_option


@dataclass(kw_only=True)
class LatsContext(AgentContext):
    """Per-run options of LATS; counts may be lowered, not raised."""

    candidates: int | None = own_option(
        "Next actions sampled per expansion (identical ones count once).",
        bound=LowerOnly(least=1),
        default=3,
    )
    max_expansions: int | None = own_option(
        "Expansions per question before the best answer so far is given.",
        bound=LowerOnly(least=1),
        default=8,
    )
    max_depth: int | None = own_option(
        "Actions on one branch; deeper nodes are not expanded.",
        bound=LowerOnly(least=1),
        default=5,
    )
    threshold: float | None = own_option(
        "Judge score (0..1) at which a final answer ends the search.",
        bound=Fraction(),
        default=0.8,
    )
