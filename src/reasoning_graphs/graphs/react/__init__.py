"""ReAct with native tool calling: think → approve → act → observe → think.

The wiring is in :mod:`.graph`.
"""

from reasoning_graphs.graphs.react.graph import build_graph

__all__ = ["build_graph"]
