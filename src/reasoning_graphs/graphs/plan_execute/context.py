"""Run options of Plan-and-Execute: the shared ones plus its revision bound, shown in Studio;
the declaration of its own option (:mod:`reasoning_graphs.pattern_options`)."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import AgentContext
from reasoning_graphs.option_bounds import LowerOnly
from reasoning_graphs.pattern_options import own_option


@dataclass(kw_only=True)
class PlanExecuteContext(AgentContext):
    """Per-run options of Plan-and-Execute; counts may be lowered, not raised."""

    max_replans: int | None = own_option(
        "Plan revisions per question before an incomplete answer.",
        bound=LowerOnly(least=0),
        default=3,
    )
