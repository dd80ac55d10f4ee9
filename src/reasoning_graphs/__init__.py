"""Classic LLM-agent reasoning patterns as LangGraph state machines.

The front door::

    from reasoning_graphs import PATTERNS, build_graph

    graph = build_graph("rewoo", model="openai:gpt-4o-mini", tools=[...])

Each name is imported on first use, so that ``import reasoning_graphs`` (which the
command line does first) loads no LangGraph.
"""

from typing import TYPE_CHECKING

from reasoning_graphs.patterns import lazy_attributes

if TYPE_CHECKING:
    from reasoning_graphs.checkpointers import open_checkpointer
    from reasoning_graphs.graphs import PATTERNS, build_graph
    from reasoning_graphs.nodes.model.setup import AgentOptions
    from reasoning_graphs.nodes.steps.step_rules import LowConfidence, NeedsMoreInfo
    from reasoning_graphs.patterns import Pattern
    from reasoning_graphs.tools.spec import ToolSpec, tool_spec

__version__ = "0.1.0"

__all__ = [
    "PATTERNS",
    "AgentOptions",
    "LowConfidence",
    "NeedsMoreInfo",
    "Pattern",
    "ToolSpec",
    "build_graph",
    "open_checkpointer",
    "tool_spec",
]

__getattr__ = lazy_attributes(
    __name__,
    {
        "PATTERNS": "reasoning_graphs.graphs:PATTERNS",
        "AgentOptions": "reasoning_graphs.nodes.model.setup:AgentOptions",
        "LowConfidence": "reasoning_graphs.nodes.steps.step_rules:LowConfidence",
        "NeedsMoreInfo": "reasoning_graphs.nodes.steps.step_rules:NeedsMoreInfo",
        "Pattern": "reasoning_graphs.patterns:Pattern",
        "ToolSpec": "reasoning_graphs.tools.spec:ToolSpec",
        "build_graph": "reasoning_graphs.graphs:build_graph",
        "open_checkpointer": "reasoning_graphs.checkpointers:open_checkpointer",
        "tool_spec": "reasoning_graphs.tools.spec:tool_spec",
    },
)
