"""Plan-and-Execute: plan → execute (one ReAct run per step) → replan → answer.

The wiring is in :mod:`.graph`.
"""

from reasoning_graphs.graphs.plan_execute.graph import build_graph

__all__ = ["build_graph"]
