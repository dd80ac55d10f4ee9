"""This pattern's record, all that the code outside it reads (:mod:`reasoning_graphs.patterns`)."""

from reasoning_graphs.patterns import Pattern

PATTERN = Pattern(
    name="lats",
    summary="LATS: Monte Carlo tree search over the model's actions, valued by a model judge.",
    builder="reasoning_graphs.graphs.lats.graph:build_graph",
    context="reasoning_graphs.graphs.lats.context:LatsContext",
    oracle="reasoning_graphs.bench.oracle.lats:reply",
    answer_nodes=frozenset({"finish"}),
)
