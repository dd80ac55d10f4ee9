"""LLM Compiler: plan a graph of tool calls, run it as dataflow, then join — or plan again.

The wiring is in :mod:`.graph`.
"""

from reasoning_graphs.graphs.llm_compiler.graph import build_graph

__all__ = ["build_graph"]
