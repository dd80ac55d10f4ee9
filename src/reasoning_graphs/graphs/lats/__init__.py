"""LATS: Monte Carlo tree search over the model's actions, valued by a model judge.

The wiring is in :mod:`.graph`.
"""

from reasoning_graphs.graphs.lats.graph import build_graph

__all__ = ["build_graph"]
