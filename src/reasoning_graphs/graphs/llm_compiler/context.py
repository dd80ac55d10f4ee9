"""Run options of LLM Compiler: the shared ones plus its round bound, shown in Studio; the
declaration of its own option (:mod:`reasoning_graphs.pattern_options`)."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import AgentContext
from reasoning_graphs.option_bounds import LowerOnly
from reasoning_graphs.pattern_options import own_option


@dataclass(kw_only=True)
class LlmCompilerContext(AgentContext):
    """Per-run options of LLM Compiler; counts may be lowered, not raised."""

    max_rounds: int | None = own_option(
        "Plan-and-run rounds per question before an incomplete answer (2: a first plan and one "
        "replan).",
        bound=LowerOnly(least=1),
        default=2,
    )
