"""ReAct with native tool calling: think → approve → act → observe → think.

The model thinks and proposes tool calls; ``approve`` settles each call
(policy, repetition, a person's decision) before anything runs; ``act`` runs
the cleared calls — concurrently when all are read-only, else one per step in
the model's order; ``observe`` records what a round ends in (a spent budget,
rounds gone stale, a hint). A turn whose calls need nothing settled goes
straight from ``think`` to ``act``, and a round with nothing to record straight
back to ``think``, so a plain round costs two steps. A turn ends on an answer,
or in ``finish`` with an honest, incomplete answer when a budget is spent or
the model goes in circles. With ``step_format="structured"`` each step is a
typed reply (:mod:`~reasoning_graphs.nodes.steps.typed_think`) that becomes the
same tool call. (Yao et al., 2023, "ReAct: Synergizing Reasoning and Acting in
Language Models".)
"""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.context import StepFormat
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.steps.step_rules import StepRule
from reasoning_graphs.nodes.steps.think import make_think
from reasoning_graphs.nodes.steps.typed_think import StepBody, StepFormatting, with_step_format
from reasoning_graphs.nodes.wiring.pattern_builder import SharedArgs, pattern_builder, served
from reasoning_graphs.nodes.wiring.react_loop import LoopParts, react_loop
from reasoning_graphs.state import AgentInput


@pattern_builder(model_turns=True)
def build_graph(
    shared: SharedArgs,
    *,
    step_format: StepFormat = "free",
    step_rules: Sequence[StepRule] = (),
) -> CompiledStateGraph:
    """Build the ReAct graph.

    Args:
        step_format: ``"free"`` (native tool calls) or ``"structured"`` (each step a typed
            reply: thought, action, input, confidence, needs_more_info); a run may choose.
        step_rules: What an unsure typed step leads to, e.g.
            ``[LowConfidence(below=0.5, then="ask")]`` (see
            :mod:`~reasoning_graphs.nodes.steps.step_rules`).

    Examples:
        >>> from reasoning_graphs.testing import ScriptedChatModel, tool_call
        >>> model = ScriptedChatModel(script=[tool_call("calculator", expression="6*7"), "42"])
        >>> graph = build_graph(model)
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    formatting = StepFormatting(step_format, tuple(step_rules))

    def think(setup: AgentSetup) -> StepBody:
        return with_step_format(setup, formatting, make_think(setup))

    return react_loop(
        shared.model,
        shared.tools,
        shared.checkpointer,
        AgentInput,
        shared.retry,
        shared.options,
        store=shared.store,
        parts=LoopParts(make_think=think),
    )


graph = served(build_graph)
