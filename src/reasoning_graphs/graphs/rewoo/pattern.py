"""This pattern's record, all that the code outside it reads (:mod:`reasoning_graphs.patterns`)."""

from reasoning_graphs.patterns import Pattern

PATTERN = Pattern(
    name="rewoo",
    summary="ReWOO: plan every tool call first, run them, then answer in one more model call.",
    builder="reasoning_graphs.graphs.rewoo.graph:build_graph",
    context="reasoning_graphs.context:AgentContext",
    oracle="reasoning_graphs.bench.oracle.rewoo:reply",
    answer_nodes=frozenset({"solve", "finish"}),
)
