"""ReAct in the original text format: Thought / Action / Action Input / Observation.

Many open models, local servers and teaching materials use this format, and
it is where agents most often break. ``think`` generates until the
Observation label, cuts anything the model invents past it, and parses the
reply in three levels (exact, fuzzy, fallback); a parsed action becomes an
ordinary tool call, so approvals, execution, budgets and checkpoints are the
shared loop of the native ReAct graph. An unparseable reply is answered with
a corrective observation; ``max_format_errors`` in a row end the run. With
``step_format="structured"`` each step is a typed reply instead
(:mod:`~reasoning_graphs.nodes.steps.typed_think`), on the same loop.
(Yao et al., 2023, "ReAct: Synergizing Reasoning and Acting in Language Models".)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from reasoning_graphs.context import StepFormat
from reasoning_graphs.graphs.react_text.context import ReactTextContext
from reasoning_graphs.graphs.react_text.think import TextFormat, is_format_error, make_think_text
from reasoning_graphs.nodes.guards.stop import call_stopped, model_step
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.steps.act import ACT
from reasoning_graphs.nodes.steps.answer_turn import wants_tools
from reasoning_graphs.nodes.steps.finish import after_outcome
from reasoning_graphs.nodes.steps.model_turn import around_turn
from reasoning_graphs.nodes.steps.step_rules import StepRule
from reasoning_graphs.nodes.steps.typed_think import StepFormatting, with_step_format
from reasoning_graphs.nodes.steps.verify import verified
from reasoning_graphs.nodes.wiring.pattern_builder import SharedArgs, pattern_builder, served
from reasoning_graphs.nodes.wiring.tool_loop import (
    add_tool_loop,
    agent_graph_builder,
    to_settle,
)
from reasoning_graphs.question import last_ai_message
from reasoning_graphs.state import AgentState
from reasoning_graphs.text_format import labels_for


def make_after_think(
    setup: AgentSetup,
) -> Callable[[AgentState], list[Send] | Literal["approve", "observe", "finish", "__end__"]]:
    """Run or settle a proposed call, correct a malformed reply, or end the turn on an
    answer; a stopped model call (a timeout, or a budget ran out while it streamed), a
    spent budget or a step rule's stop ends in ``finish``'s honest stop."""

    def after_think(
        state: AgentState,
    ) -> list[Send] | Literal["approve", "observe", "finish", "__end__"]:
        if call_stopped(state):
            return "finish"
        if is_format_error(state["messages"][-1]):
            return "observe"
        outcome = state.get("outcome")
        if outcome and after_outcome(outcome) == "finish":
            return "finish"
        if wants_tools(last_ai_message(state["messages"])):
            return to_settle(state, setup)
        return "__end__"

    return after_think


@pattern_builder(model_turns=True, context=ReactTextContext)
def build_graph(
    shared: SharedArgs,
    *,
    language: str = "en",
    max_format_errors: int = 3,
    grammar: bool | None = None,
    remind_format: bool,
    step_format: StepFormat = "free",
    step_rules: Sequence[StepRule] = (),
) -> CompiledStateGraph:
    """Build the text-format ReAct graph.

    Args:
        language: Label set of the format: ``"en"`` (Thought, Action, …) or
            ``"zh"`` (思考, 行动, …).
        max_format_errors: Malformed replies in a row before the run stops.
        grammar: Constrain llama.cpp models to the format with a grammar: ``None``
            (default) for llama.cpp models only, ``True`` to require one, ``False``
            to let the model write freely.
        step_format: ``"free"`` (the text format) or ``"structured"`` (each step a typed
            reply: thought, action, input, confidence, needs_more_info); a run may choose.
        step_rules: What an unsure typed step leads to, e.g.
            ``[LowConfidence(below=0.5, then="ask")]`` (see
            :mod:`~reasoning_graphs.nodes.steps.step_rules`).

    Examples:
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

    builder = agent_graph_builder(AgentState, setup=setup, context_schema=ReactTextContext)
    think = with_step_format(
        setup,
        StepFormatting(step_format, tuple(step_rules)),
        make_think_text(
            setup, text_format, max_format_errors=max_format_errors, remind_format=remind_format
        ),
    )
    builder.add_routed_node(
        "think",
        model_step(verified(setup, around_turn(setup, think))),
        make_after_think(setup),
        ("approve", ACT, "observe", "finish", END),
    )
    builder.add_edge(START, "think")
    add_tool_loop(builder, setup, ask_final=text_format.ask_final, report=True, reflect=True)
    return shared.compile(builder, "react_text", setup)


graph = served(build_graph)
