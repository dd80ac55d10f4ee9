"""ReWOO: plan every tool call first, run them, then answer — two model calls in all.

The wiring is in :mod:`.graph`.
"""

from reasoning_graphs.graphs.rewoo.graph import build_graph

__all__ = ["build_graph"]
