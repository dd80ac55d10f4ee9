"""Reflexion: act (a ReAct attempt) → evaluate → passed or out of trials? done : reflect → act.

The wiring is in :mod:`.graph`.
"""

from reasoning_graphs.graphs.reflexion.graph import build_graph

__all__ = ["build_graph"]
