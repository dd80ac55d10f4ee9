"""This pattern's record, all that the code outside it reads (:mod:`reasoning_graphs.patterns`)."""

from reasoning_graphs.patterns import Pattern

PATTERN = Pattern(
    name="cot",
    summary="Chain-of-Thought, optionally with self-consistency: reason, vote, answer; no tools.",
    builder="reasoning_graphs.graphs.cot.graph:build_graph",
    context="reasoning_graphs.graphs.cot.context:CotContext",
    oracle="reasoning_graphs.bench.oracle.cot:reply",
    uses_tools=False,
)
