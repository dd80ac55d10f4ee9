"""This pattern's record, all that the code outside it reads (:mod:`reasoning_graphs.patterns`)."""

from reasoning_graphs.patterns import Pattern

PATTERN = Pattern(
    name="tot",
    summary="Tree-of-Thoughts: breadth-first search over thoughts with a beam; no tools.",
    builder="reasoning_graphs.graphs.tot.graph:build_graph",
    context="reasoning_graphs.graphs.tot.context:TotContext",
    oracle="reasoning_graphs.bench.oracle.tot:reply",
    uses_tools=False,
)
