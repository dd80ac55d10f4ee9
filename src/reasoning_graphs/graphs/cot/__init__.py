"""Chain-of-Thought, optionally with self-consistency: ``reason`` thinks, votes and answers.

The wiring is in :mod:`.graph`.
"""

from reasoning_graphs.graphs.cot.graph import build_graph

__all__ = ["build_graph"]
