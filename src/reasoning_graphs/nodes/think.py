"""``think``: one model call that either answers or proposes tool calls.

Within a question the loop checks the budgets after each tool round; ``think``
checks them too before its call, for a run that starts with the question's
budget already spent (a plan step or a trial after earlier ones) and must go
straight to its closing answer. The loop's guards advise the model in the
prompt of this call (:mod:`~reasoning_graphs.nodes.advice`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, SystemMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.advice import advice_for, advised
from reasoning_graphs.nodes.budget import budget_stop
from reasoning_graphs.nodes.model_call import ModelRequest, call_model
from reasoning_graphs.nodes.model_view import model_view
from reasoning_graphs.nodes.setup import AgentSetup
from reasoning_graphs.state import AgentState


def wants_tools(message: AIMessage) -> bool:
    """The reply proposes tool calls (well-formed or not) rather than answering."""
    return bool(message.tool_calls or message.invalid_tool_calls)


def make_think(setup: AgentSetup) -> Callable[[AgentState], Body[dict[str, Any]]]:
    """Build the ``think`` node for ``setup``."""
    system = SystemMessage(setup.system_prompt)  # the same for every call: made once

    def think(state: AgentState) -> Body[dict[str, Any]]:
        run = setup.for_run()
        spent = budget_stop(state, run.limits)
        if spent:  # a step or trial whose question spent the budget before it began
            return {"outcome": spent, "to_run": []}
        messages = state["messages"]
        shown = model_view(messages, run.registry)
        prompt = advised([system, *shown], advice_for(messages, run.limits))
        request = ModelRequest(prompt=prompt, tools=run.usable_tools(state))
        reply = yield from call_model(run, request, state)
        outcome = None if wants_tools(reply.message) else {"status": "answered"}
        return {
            "messages": [reply.message],
            "trajectory": [reply.event],
            "outcome": outcome,
            "to_run": [],
        }

    return think
