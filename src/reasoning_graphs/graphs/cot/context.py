"""Run options of Chain-of-Thought: the shared ones plus its number of samples, shown in Studio."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import AgentContext, run_option
from reasoning_graphs.option_bounds import LowerOnly


@dataclass(kw_only=True)
class CotContext(AgentContext):
    """Per-run options of Chain-of-Thought; counts may be lowered, not raised."""

    samples: int | None = run_option(
        "Chains of thought per question; above 1 the majority answer wins. "
        "May lower the graph's, not raise it.",
        bound=LowerOnly(least=1),
    )
