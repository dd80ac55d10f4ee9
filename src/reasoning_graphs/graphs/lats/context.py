"""Run options of LATS: the shared ones plus the search's width, length, depth and goal, shown in
Studio."""

from __future__ import annotations

from dataclasses import dataclass, field

from reasoning_graphs.context import AgentContext


@dataclass(kw_only=True)
class LatsContext(AgentContext):
    """Per-run options of LATS; counts may be lowered, not raised."""

    candidates: int | None = field(
        default=None,
        metadata={
            "description": (
                "Next actions sampled per expansion. May lower the graph's, not raise it."
            )
        },
    )
    max_expansions: int | None = field(
        default=None,
        metadata={
            "description": (
                "Expansions per question before the best answer so far is given. May "
                "lower the graph's, not raise it."
            )
        },
    )
    max_depth: int | None = field(
        default=None,
        metadata={
            "description": (
                "Actions on one branch; deeper nodes are not expanded. May lower the "
                "graph's, not raise it."
            )
        },
    )
    threshold: float | None = field(
        default=None,
        metadata={"description": "Judge score (0..1) at which a final answer ends the search."},
    )
