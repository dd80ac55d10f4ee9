"""Run options of the text-format ReAct graph: the loop's, plus the format reminder."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import ReactLoopContext, run_option
from reasoning_graphs.option_bounds import OnOnly


@dataclass(kw_only=True)
class ReactTextContext(ReactLoopContext):
    """Per-run options of ``react_text``."""

    remind_format: bool | None = run_option(
        "Restate the Thought/Action/Final Answer format at the end of every prompt, not only "
        "after a reply that broke it. May turn it on, not off.",
        bound=OnOnly(),
    )
