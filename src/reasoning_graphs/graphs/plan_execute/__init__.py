"""Plan-and-Execute: plan → execute each step (a ReAct run) → replan → done, execute, or finish.

The wiring is in :mod:`.graph`.
"""

from reasoning_graphs.graphs.plan_execute.graph import build_graph

__all__ = ["build_graph"]
