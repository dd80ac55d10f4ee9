"""Run options of LATS: the shared ones plus the search's width, length, depth and goal, shown in
Studio."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import AgentContext, run_option
from reasoning_graphs.option_bounds import Fraction, LowerOnly


@dataclass(kw_only=True)
class LatsContext(AgentContext):
    """Per-run options of LATS; counts may be lowered, not raised."""

    candidates: int | None = run_option(
        "Next actions sampled per expansion. May lower the graph's, not raise it.",
        bound=LowerOnly(least=1),
    )
    max_expansions: int | None = run_option(
        "Expansions per question before the best answer so far is given. May "
        "lower the graph's, not raise it.",
        bound=LowerOnly(least=1),
    )
    max_depth: int | None = run_option(
        "Actions on one branch; deeper nodes are not expanded. "
        "May lower the graph's, not raise it.",
        bound=LowerOnly(least=1),
    )
    threshold: float | None = run_option(
        "Judge score (0..1) at which a final answer ends the search.",
        bound=Fraction(),
    )
