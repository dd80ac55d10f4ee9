"""ReAct in the original text format: Thought / Action / Action Input / Observation.

The wiring is in :mod:`.graph`.
"""

from reasoning_graphs.graphs.react_text.graph import build_graph

__all__ = ["build_graph"]
