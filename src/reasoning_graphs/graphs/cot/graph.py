"""Chain-of-Thought, optionally with self-consistency: ``reason`` thinks, votes and answers.

``reason`` asks the model to think step by step and end with ``Answer: ...``,
reads the answer off tolerantly, and appends it as the reply. With
``samples=k`` it reasons k times concurrently and answers with the majority,
reporting the agreement (``"3/5"``). No tools: the reasoning is the method.
(Wei et al., 2022, "Chain-of-Thought Prompting Elicits Reasoning in Large
Language Models"; Wang et al., 2023, "Self-Consistency Improves Chain of
Thought Reasoning in Language Models".)
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.effects import effect_node
from reasoning_graphs.graphs.cot.context import CotContext
from reasoning_graphs.graphs.cot.prompts import COT_SYSTEM
from reasoning_graphs.graphs.cot.reason import make_reason
from reasoning_graphs.graphs.cot.state import CotState
from reasoning_graphs.nodes.grounding.report import always
from reasoning_graphs.nodes.guards.stop import call_stopped, model_node, not_stopped
from reasoning_graphs.nodes.model.setup import agent_setup
from reasoning_graphs.nodes.steps.finish import make_finish
from reasoning_graphs.nodes.steps.verify import verified
from reasoning_graphs.nodes.wiring.pattern_builder import SharedArgs, pattern_builder, served
from reasoning_graphs.nodes.wiring.tool_loop import agent_graph_builder


def after_reason(state: CotState) -> Literal["finish", "__end__"]:
    """The vote is the answer; a reasoning call that was stopped (it timed out, or a
    budget ran out while it streamed) ends in ``finish``'s honest stop instead."""
    return "finish" if call_stopped(state) else "__end__"


@pattern_builder(context=CotContext)
def build_graph(shared: SharedArgs, *, samples: int) -> CompiledStateGraph:
    """Build the Chain-of-Thought graph.

    The pattern calls no tools: ``tools`` is accepted so that every pattern builds
    alike, and of the options only ``system_prompt`` applies (default: reason, then
    ``Answer: ...``). For ``samples > 1`` the model should sample (temperature above
    0), or every vote is the same.

    Raises:
        ValueError: ``samples`` is below 1.

    Examples:
        >>> from reasoning_graphs.testing import ScriptedChatModel
        >>> model = ScriptedChatModel(script=["6*7 is 42.\\nAnswer: 42"])
        >>> graph = build_graph(model)
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    shared.options.setdefault("system_prompt", COT_SYSTEM)
    setup = agent_setup(shared.model, (), shared.retry, **shared.options)

    builder = agent_graph_builder(CotState, setup=setup, context_schema=CotContext)
    reason = verified(setup, make_reason(setup, samples=samples), not_stopped)
    builder.add_node("reason", model_node("reason", reason))
    builder.add_node("finish", effect_node("finish", verified(setup, make_finish(setup), always)))
    builder.add_edge(START, "reason")
    builder.add_conditional_edges("reason", after_reason, ["finish", END])
    builder.add_edge("finish", END)
    return shared.compile(builder, "cot", setup)


graph = served(build_graph)
