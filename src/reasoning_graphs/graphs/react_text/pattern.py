"""This pattern's record, all that the code outside it reads (:mod:`reasoning_graphs.patterns`)."""

from reasoning_graphs.patterns import Pattern

PATTERN = Pattern(
    name="react_text",
    summary="ReAct in the original text format: Thought / Action / Action Input / Observation.",
    builder="reasoning_graphs.graphs.react_text.graph:build_graph",
    context="reasoning_graphs.graphs.react_text.context:ReactTextContext",
    oracle="reasoning_graphs.bench.oracle.react_text:reply",
)
