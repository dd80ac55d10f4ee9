"""Run options of Reflexion: the shared ones plus its trials and passing score, shown in Studio."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import AgentContext, run_option
from reasoning_graphs.option_bounds import Fraction, LowerOnly


@dataclass(kw_only=True)
class ReflexionContext(AgentContext):
    """Per-run options of Reflexion; counts may be lowered, not raised."""

    max_trials: int | None = run_option(
        "Attempts per question before the best one is given. May lower the graph's, not raise it.",
        bound=LowerOnly(least=1),
    )
    threshold: float | None = run_option(
        "Score (0..1) an attempt needs to be accepted.", bound=Fraction()
    )
    recall_lessons: int | None = run_option(
        "Lessons of earlier, similar questions (any thread of the same memory user) given to "
        "the first attempt, when the graph has a store. May lower the graph's, not raise it.",
        bound=LowerOnly(least=0),
    )
