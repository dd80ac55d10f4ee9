"""``think``: one model call that either answers or proposes tool calls.

Within a question the loop checks the budgets after each tool round; ``think``
checks them too before its call, for a run that starts with the question's
budget already spent (a plan step or a trial after earlier ones) and must go
straight to its closing answer. The loop's guards advise the model in the
prompt of this call (:mod:`~reasoning_graphs.nodes.guards.advice`).

When the question's next call is an answer turn (its tool rounds made, or its latest
rounds only repeats of pure calls answered from earlier ones), the call is made with
tools off and its reply is the answer (:mod:`~reasoning_graphs.nodes.steps.answer_turn`).
"""

from __future__ import annotations

from collections.abc import Callable

from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.guards.advice import advice_for, advised
from reasoning_graphs.nodes.guards.budget import budget_stop
from reasoning_graphs.nodes.model.call import ModelRequest, call_model
from reasoning_graphs.nodes.model.prompt_hooks import with_added, with_writes
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.model.view import model_view
from reasoning_graphs.nodes.steps.answer_turn import (
    answer_turn,
    answer_without_calls,
    tools_off,
    wants_tools,
)
from reasoning_graphs.nodes.steps.reflect import with_reflection
from reasoning_graphs.state import AgentState, AgentUpdate, Outcome


def make_think(setup: AgentSetup) -> Callable[[AgentState], Body[AgentUpdate]]:
    """Build the ``think`` node for ``setup``."""

    def think(state: AgentState) -> Body[AgentUpdate]:
        run = setup.for_run()
        spent = budget_stop(state, run.limits)
        if spent:  # a step or trial whose question spent the budget before it began
            return {"outcome": spent, "to_run": []}
        messages = state["messages"]
        shown = model_view(messages, run.registry)
        advice = advice_for(messages, run.limits)
        tools = run.usable_tools(state)
        turn = answer_turn(state, run.limits) if tools else None
        if turn is not None:
            advice = [*advice, turn.advice]
        prompt = advised(with_reflection([*setup.system, *shown], state), advice)
        if turn is None:
            request = ModelRequest(prompt=prompt, tools=tools, answer=run.response_format)
        else:
            request = tools_off(prompt, tools)
        reply = yield from call_model(run, request, state)
        if turn is not None:
            return with_writes(answer_without_calls(reply, turn), reply.writes)  # type: ignore[return-value]
        outcome: Outcome | None = None if wants_tools(reply.message) else {"status": "answered"}
        update: AgentUpdate = {
            "messages": with_added(reply),
            "trajectory": [reply.event],
            "outcome": outcome,
            "to_run": [],
        }
        return with_writes(update, reply.writes) if reply.writes else update  # type: ignore[return-value]

    return think
