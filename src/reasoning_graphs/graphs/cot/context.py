"""Run options of Chain-of-Thought: the shared ones plus its number of samples, shown in
Studio; the declaration of its own option (:mod:`reasoning_graphs.pattern_options`)."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import AgentContext
from reasoning_graphs.option_bounds import LowerOnly
from reasoning_graphs.pattern_options import own_option


@dataclass(kw_only=True)
class CotContext(AgentContext):
    """Per-run options of Chain-of-Thought; counts may be lowered, not raised."""

    samples: int | None = own_option(
        "Chains of thought per question; above 1, the majority answer wins.",
        bound=LowerOnly(least=1),
        default=1,
    )
