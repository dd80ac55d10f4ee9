"""This pattern's record, all that the code outside it reads (:mod:`reasoning_graphs.patterns`)."""

from reasoning_graphs.patterns import Pattern

PATTERN = Pattern(
    name="llm_compiler",
    summary="LLM Compiler: plan a graph of tool calls, run it as dataflow, then join or replan.",
    builder="reasoning_graphs.graphs.llm_compiler.graph:build_graph",
    context="reasoning_graphs.graphs.llm_compiler.context:LlmCompilerContext",
    oracle="reasoning_graphs.bench.oracle.llm_compiler:reply",
    answer_nodes=frozenset({"finish"}),
)
