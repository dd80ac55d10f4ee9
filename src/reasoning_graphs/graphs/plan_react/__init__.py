"""Plan-in-context ReAct: plan once, then one ReAct loop with the plan in its prompt.

The wiring is in :mod:`.graph`; :mod:`.pattern` is its record. ``build_graph`` is
imported on first use, so that reading the record loads no LangGraph.
"""

from typing import TYPE_CHECKING

from reasoning_graphs.graphs.plan_react.pattern import PATTERN
from reasoning_graphs.patterns import lazy_attributes

if TYPE_CHECKING:
    from reasoning_graphs.graphs.plan_react.graph import build_graph

__all__ = ["PATTERN", "build_graph"]
__getattr__ = lazy_attributes(__name__, {"build_graph": PATTERN.builder})
