"""This pattern's record, all that the code outside it reads (:mod:`reasoning_graphs.patterns`)."""

from reasoning_graphs.patterns import Pattern

PATTERN = Pattern(
    name="plan_react",
    summary="Plan-in-context ReAct: plan once, then one ReAct loop that marks the plan's "
    "items done and has it rewritten when an observation contradicts it.",
    builder="reasoning_graphs.graphs.plan_react.graph:build_graph",
    context="reasoning_graphs.graphs.plan_react.context:PlanReactContext",
    oracle="reasoning_graphs.bench.oracle.plan_react:reply",
    answer_nodes=frozenset({"think", "finish"}),
)
