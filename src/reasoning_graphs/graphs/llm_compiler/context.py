"""Run options of LLM Compiler: the shared ones plus its round bound, shown in Studio."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import AgentContext, run_option
from reasoning_graphs.option_bounds import LowerOnly


@dataclass(kw_only=True)
class LlmCompilerContext(AgentContext):
    """Per-run options of LLM Compiler; counts may be lowered, not raised."""

    max_rounds: int | None = run_option(
        "Plan-and-run rounds per question before an incomplete answer. May "
        "lower the graph's, not raise it.",
        bound=LowerOnly(least=1),
    )
