"""ReAct in the original text format: Thought / Action / Action Input / Observation.

Many open models, local servers and teaching materials use this format, and
it is where agents most often break. ``think`` generates until the
Observation label, cuts anything the model invents past it, and parses the
reply in three levels (exact, fuzzy, fallback); a parsed action becomes an
ordinary tool call, so approvals, execution, budgets and checkpoints are the
shared loop of the native ReAct graph. An unparseable reply is answered with
a corrective observation; ``max_format_errors`` in a row end the run.
(Yao et al., 2023, "ReAct: Synergizing Reasoning and Acting in Language Models".)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from reasoning_graphs.context import ReactLoopContext
from reasoning_graphs.graphs.react_text.think import TextFormat, is_format_error, make_think_text
from reasoning_graphs.nodes.guards.stop import call_stopped, model_node
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.steps.act import ACT
from reasoning_graphs.nodes.steps.think import wants_tools
from reasoning_graphs.nodes.steps.verify import verified
from reasoning_graphs.nodes.wiring.pattern_builder import ServedGraph, SharedArgs, pattern_builder
from reasoning_graphs.nodes.wiring.tool_loop import (
    add_tool_loop,
    agent_graph_builder,
    compile_agent,
    to_settle,
)
from reasoning_graphs.question import last_ai_message
from reasoning_graphs.state import AgentState
from reasoning_graphs.text_format import labels_for


def make_after_think(
    setup: AgentSetup,
) -> Callable[[AgentState], list[Send] | Literal["approve", "observe", "finish", "__end__"]]:
    """Run or settle a proposed call, correct a malformed reply, or end the turn on an
    answer; a stopped model call (a timeout, or a budget ran out while it streamed) ends
    in ``finish``'s honest stop."""

    def after_think(
        state: AgentState,
    ) -> list[Send] | Literal["approve", "observe", "finish", "__end__"]:
        if call_stopped(state):
            return "finish"
        reply = last_ai_message(state["messages"])
        if wants_tools(reply):
            return to_settle(state, setup)
        return "observe" if is_format_error(reply) else "__end__"

    return after_think


@pattern_builder
def build_graph(
    shared: SharedArgs,
    *,
    language: str = "en",
    max_format_errors: int = 3,
    grammar: bool | None = None,
) -> CompiledStateGraph:
    """Build the text-format ReAct graph.

    Args:
        language: Label set of the format: ``"en"`` (Thought, Action, …) or
            ``"zh"`` (思考, 行动, …).
        max_format_errors: Malformed replies in a row before the run stops.
        grammar: Constrain llama.cpp models to the format with a grammar: ``None``
            (default) for llama.cpp models only, ``True`` to require one, ``False``
            to let the model write freely.

    Example:
        >>> from reasoning_graphs.testing import ScriptedChatModel
        >>> model = ScriptedChatModel(script=[
        ...     'Thought: add\\nAction: calculator\\nAction Input: {"expression": "6*7"}',
        ...     "Thought: done\\nFinal Answer: 42",
        ... ])
        >>> graph = build_graph(model)
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    setup = shared.setup()
    text_format = TextFormat(labels_for(language), grammar=grammar)

    builder = agent_graph_builder(context_schema=ReactLoopContext)
    think = make_think_text(setup, text_format, max_format_errors=max_format_errors)
    builder.add_node("think", model_node("think", verified(setup, think)))
    builder.add_edge(START, "think")
    builder.add_conditional_edges(
        "think", make_after_think(setup), ["approve", ACT, "observe", "finish", END]
    )
    add_tool_loop(builder, setup, ask_final=text_format.ask_final, report=True, reflect=True)
    return compile_agent(
        builder, shared.checkpointer, "react_text", tool_names=setup.registry.names()
    )


graph = ServedGraph(build_graph)
