"""LLM Compiler: plan a graph of tool calls, run it as dataflow, then join — or plan again.

``plan`` asks the model once for a round's tasks, each naming the tasks whose
results it needs (``$1`` in an argument is task 1's result), and checks the
graph before anything runs; an invalid plan is re-made once with the problem
named, and if it is still invalid ``finish`` explains. ``schedule`` (no model
call) runs the plan in passes: each pass puts the dangerous tasks whose inputs
are known to a person in one interrupt, with earlier results substituted, then
runs every task the moment its own deps are done — read-only tasks overlap,
stateful ones keep plan order and end their chain's pass, so each is saved
before whatever comes after it starts — each as a durable LangGraph ``@task``,
so a crash re-runs only what had not finished. ``join`` answers from the results
or asks for another round; rounds and budgets are bounded, and past them
``finish`` gives an honest, incomplete answer. (Kim et al., 2023, "An LLM
Compiler for Parallel Function Calling".)

The edges, node by node::

    START    → plan
    plan     → schedule  the plan is valid
             → plan      it is not: plan again, once
             → finish    it is still not, or the budget is spent
    schedule → schedule  tasks are left: another pass
             → join      every task of the plan is settled
             → finish    a tool-call limit ended the question
    join     → report    answered
             → plan      another round is needed
             → finish    the rounds or a budget are spent
    finish   → report
    report   → END       the answer's grounding report is stored
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.effects import effect_node
from reasoning_graphs.graphs.llm_compiler.context import LlmCompilerContext
from reasoning_graphs.graphs.llm_compiler.join import ask_joiner, make_join
from reasoning_graphs.graphs.llm_compiler.plan import make_plan
from reasoning_graphs.graphs.llm_compiler.prompts import LLM_COMPILER_SYSTEM
from reasoning_graphs.graphs.llm_compiler.schedule import make_schedule, round_settled
from reasoning_graphs.graphs.llm_compiler.state import LlmCompilerState
from reasoning_graphs.nodes.guards.stop import model_node
from reasoning_graphs.nodes.steps.finish import after_outcome, make_finish
from reasoning_graphs.nodes.wiring.pattern_builder import SharedArgs, pattern_builder, served
from reasoning_graphs.nodes.wiring.tool_loop import add_report, agent_graph_builder

MODEL_CALLS_PER_ROUND = 4
"""Model calls one round may make, with one to spare: a plan, a re-made plan, the join (the
schedule's passes make none). The default model-call budget is this times ``max_rounds``, so only
the round bound stops replans unless a run sets a tighter ``max_model_calls``."""


def after_plan(state: LlmCompilerState) -> Literal["schedule", "plan", "finish"]:
    """Run a valid plan; re-make an invalid one; give up honestly when ``plan`` says so."""
    if state.get("outcome"):
        return "finish"
    return "plan" if state.get("plan_problem") else "schedule"


def after_schedule(state: LlmCompilerState) -> Literal["schedule", "join", "finish"]:
    """Another pass until every task of the plan is settled; the honest stop when a pass
    ended the question (a tool-call limit's end)."""
    if state.get("outcome"):
        return "finish"
    return "join" if round_settled(state) else "schedule"


def after_join(state: LlmCompilerState) -> Literal["plan", "finish", "__end__"]:
    """Answered: done. Another round wanted: plan, unless ``join`` found the bound reached."""
    outcome = state.get("outcome")
    return "plan" if outcome is None else after_outcome(outcome)


@pattern_builder(context=LlmCompilerContext)
def build_graph(shared: SharedArgs, *, max_rounds: int) -> CompiledStateGraph:
    """Build the LLM Compiler graph.

    ``max_model_calls`` defaults to :data:`MODEL_CALLS_PER_ROUND` × ``max_rounds``.

    Examples:
        >>> from reasoning_graphs.testing import ScriptedChatModel
        >>> from reasoning_graphs.tools.builtins import calculator
        >>> plan = {"tasks": [{"id": 1, "tool": "calculator", "args": {"expression": "6*7"}}]}
        >>> graph = build_graph(ScriptedChatModel(script=[plan, "42"]), tools=[calculator()])
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    shared.options.setdefault("system_prompt", LLM_COMPILER_SYSTEM)
    shared.options.setdefault(
        "max_model_calls", shared.options.get("max_steps", MODEL_CALLS_PER_ROUND * max_rounds)
    )
    setup = shared.setup()

    builder = agent_graph_builder(LlmCompilerState, setup=setup, context_schema=LlmCompilerContext)
    builder.add_node("plan", model_node("plan", make_plan(setup)))
    builder.add_node("schedule", effect_node("schedule", make_schedule(setup)))
    builder.add_node("join", model_node("join", make_join(setup, max_rounds)))
    builder.add_node("finish", effect_node("finish", make_finish(setup, ask_joiner)))
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", after_plan, ["schedule", "plan", "finish"])
    builder.add_conditional_edges("schedule", after_schedule, ["schedule", "join", "finish"])
    end = add_report(builder, setup)
    builder.add_conditional_edges(
        "join", after_join, {"plan": "plan", "finish": "finish", END: end}
    )
    builder.add_edge("finish", end)
    return shared.compile(builder, "llm_compiler", setup)


graph = served(build_graph)
