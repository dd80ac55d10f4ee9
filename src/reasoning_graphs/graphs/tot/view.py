"""The problem and one path of the tree, as every Tree-of-Thoughts call reads them."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from reasoning_graphs.graphs.tot.prompts import NO_STEPS, PATH_REQUEST, STEP_LINE
from reasoning_graphs.graphs.tot.search import Thought


def render_path(problem: str, thoughts: Sequence[Thought]) -> str:
    """The problem and the steps taken so far, numbered."""
    steps = [
        STEP_LINE.format(number=number, text=t["text"]) for number, t in enumerate(thoughts, 1)
    ]
    return PATH_REQUEST.format(problem=problem, steps="\n".join(steps) or NO_STEPS)


def path_prompt(system: str, request: str) -> list[BaseMessage]:
    """A request about a path (see :func:`render_path`), under the run's instructions
    (``system``: the graph's ``system_prompt``, the pattern's own by default)."""
    return [SystemMessage(system), HumanMessage(request)]
