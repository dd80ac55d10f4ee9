"""This pattern's record, all that the code outside it reads (:mod:`reasoning_graphs.patterns`)."""

from reasoning_graphs.patterns import Pattern

PATTERN = Pattern(
    name="reflexion",
    summary="Reflexion: attempt, have the answer judged, reflect on the failure and try again.",
    builder="reasoning_graphs.graphs.reflexion.graph:build_graph",
    context="reasoning_graphs.graphs.reflexion.context:ReflexionContext",
    oracle="reasoning_graphs.bench.oracle.reflexion:reply",
)
