"""This pattern's record, all that the code outside it reads (:mod:`reasoning_graphs.patterns`)."""

from reasoning_graphs.patterns import Pattern

PATTERN = Pattern(
    name="plan_execute",
    summary="Plan-and-Execute: plan, run each step as a ReAct run, replan until done.",
    builder="reasoning_graphs.graphs.plan_execute.graph:build_graph",
    context="reasoning_graphs.graphs.plan_execute.context:PlanExecuteContext",
    oracle="reasoning_graphs.bench.oracle.plan_execute:reply",
    answer_nodes=frozenset({"finish"}),
)
