"""Run options of the text-format ReAct graph: the loop's, plus the format reminder; the
declaration of its own option (:mod:`reasoning_graphs.pattern_options`)."""

from __future__ import annotations

from dataclasses import dataclass

from reasoning_graphs.context import ReactLoopContext
from reasoning_graphs.option_bounds import OnOnly
from reasoning_graphs.pattern_options import own_option


@dataclass(kw_only=True)
class ReactTextContext(ReactLoopContext):
    """Per-run options of ``react_text``."""

    remind_format: bool | None = own_option(
        "Restate the Thought/Action/Final Answer format at the end of every prompt, not only "
        "after a reply that broke it.",
        bound=OnOnly(),
        default=False,
    )
