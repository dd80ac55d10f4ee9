"""This pattern's record, all that the code outside it reads (:mod:`reasoning_graphs.patterns`)."""

from reasoning_graphs.patterns import Pattern

PATTERN = Pattern(
    name="react",
    summary="ReAct with native tool calling: think, act on the tools' results, think again.",
    builder="reasoning_graphs.graphs.react.graph:build_graph",
    context="reasoning_graphs.context:ReactLoopContext",
    oracle="reasoning_graphs.bench.oracle.react:reply",
    answer_nodes=frozenset({"think", "finish"}),
)
