"""The middleware's ``before_agent`` and ``after_agent`` hooks, at each question's start and end.

``create_agent`` runs them once per invocation, one node per hook; here each is one
node of the pattern's own graph, whatever the pattern: ``before_agent`` runs from the
graph's start, the hooks in the middleware's order, before the pattern's first step;
``after_agent`` runs on every way out of the graph, last middleware first, once the
answer is written. A resume after a person's decision continues the question, so
neither runs again then; a plan step's or a trial's own graph is part of its question
and runs neither.

What a hook returns is written to the state (messages by id, a middleware's own
fields beside the pattern's). A ``before_agent`` hook that jumps to ``"end"`` ends the
question before any step, incomplete, with its words as the answer (as a turn's hook
does, :func:`~reasoning_graphs.nodes.steps.model_turn.ended_by`), and the ``after_agent``
hooks still run; one in ``after_agent`` skips the hooks after it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langgraph.graph import END

from reasoning_graphs.effects import Body, effect_node
from reasoning_graphs.middleware import AFTER_AGENT, BEFORE_AGENT
from reasoning_graphs.nodes.model.prompt_hooks import run_hook
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.steps.model_turn import ended_by
from reasoning_graphs.nodes.wiring.agent_graph import AgentGraph
from reasoning_graphs.state import AgentState

Step = Callable[[Mapping[str, Any]], Body[Mapping[str, Any]]]

START_HOOKS = "before_agent"
END_HOOKS = "after_agent"


def add_question_hooks(builder: AgentGraph, setup: AgentSetup) -> None:
    """Add the ``before_agent`` node at the graph's start and the ``after_agent`` node on its
    every way out, when a middleware writes them; call it once the graph is wired."""
    before, after = setup.before_agent_hooks, setup.after_agent_hooks
    out = END
    if after:
        builder.end_at(END_HOOKS)
        builder.add_node(END_HOOKS, effect_node(END_HOOKS, end_hooks(after)))
        builder.add_edge(END_HOOKS, END)
        out = END_HOOKS
    if before:
        first = builder.entry()
        builder.start_at(START_HOOKS)

        def after_start(state: AgentState) -> str:
            outcome = state.get("outcome")
            return out if outcome and outcome.get("ended") else first

        builder.add_routed_node(START_HOOKS, start_hooks(before), after_start, (first, out))


def start_hooks(middleware: Sequence[Any]) -> Step:
    """The ``before_agent`` step: each hook in order on the question's first state."""

    def body(state: Mapping[str, Any]) -> Body[Mapping[str, Any]]:
        seen: dict[str, Any] = dict(state)
        written: dict[str, Any] = {"outcome": None}  # an earlier question's is not this one's
        for m in middleware:
            if (yield from run_hook(m, BEFORE_AGENT, seen, written)):
                return ended_by(m, seen, written)
        return written

    return body


def end_hooks(middleware: Sequence[Any]) -> Step:
    """The ``after_agent`` step: each hook, last middleware first, on the answered state."""

    def body(state: Mapping[str, Any]) -> Body[Mapping[str, Any]]:
        seen: dict[str, Any] = dict(state)
        written: dict[str, Any] = {}
        for m in middleware:
            if (yield from run_hook(m, AFTER_AGENT, seen, written)):
                break
        return written

    return body
