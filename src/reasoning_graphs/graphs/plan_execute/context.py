"""Run options of Plan-and-Execute: the shared ones plus its revision bound, shown in Studio."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import AgentContext, run_option
from reasoning_graphs.option_bounds import LowerOnly


@dataclass(kw_only=True)
class PlanExecuteContext(AgentContext):
    """Per-run options of Plan-and-Execute; counts may be lowered, not raised."""

    max_replans: int | None = run_option(
        "Plan revisions per question before an incomplete answer. May "
        "lower the graph's, not raise it.",
        bound=LowerOnly(least=0),
    )
