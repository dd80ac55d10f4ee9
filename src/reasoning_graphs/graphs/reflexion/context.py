"""Run options of Reflexion: the shared ones plus its trials and passing score, shown in
Studio; the declaration of its own options (:mod:`reasoning_graphs.pattern_options`)."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import AgentContext
from reasoning_graphs.option_bounds import Fraction, LowerOnly
from reasoning_graphs.pattern_options import own_option


@dataclass(kw_only=True)
class ReflexionContext(AgentContext):
    """Per-run options of Reflexion; counts may be lowered, not raised."""

    max_trials: int | None = own_option(
        "Attempts per question before the best one is given.",
        bound=LowerOnly(least=1),
        default=3,
    )
    threshold: float | None = own_option(
        "Score (0..1) an attempt needs to be accepted.", bound=Fraction(), default=0.8
    )
    recall_lessons: int | None = own_option(
        "Lessons of earlier, similar questions (any thread of the same memory user) given to "
        "the first attempt, when the graph has a store (0: none).",
        bound=LowerOnly(least=0),
        default=3,
    )
