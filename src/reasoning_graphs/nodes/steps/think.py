"""``think``: one model call that either answers or proposes tool calls.

Within a question the loop checks the budgets after each tool round; ``think``
checks them too before its call, for a run that starts with the question's
budget already spent (a plan step or a trial after earlier ones) and must go
straight to its closing answer. The loop's guards advise the model in the
prompt of this call (:mod:`~reasoning_graphs.nodes.guards.advice`).

Once the question has made its rounds of tool calls (``max_tool_rounds``, which
the modes preset), the call is made with tools off and its reply is the answer:
a run that used the rounds it was given ends answered, not cut short. A model
that proposes calls all the same gets none run; with no words besides them, the
question concludes as incomplete (``finish``).
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage, SystemMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.guards.advice import advice_for, advised
from reasoning_graphs.nodes.guards.budget import budget_stop, rounds_spent
from reasoning_graphs.nodes.model.call import ModelReply, ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.model.view import model_view
from reasoning_graphs.nodes.steps.prompts import ROUNDS_SPENT
from reasoning_graphs.nodes.steps.reflect import with_reflection
from reasoning_graphs.state import AgentState, AgentUpdate, Outcome

ROUND_LIMIT = "reached the limit of {limit} tool round(s)"


def wants_tools(message: AIMessage) -> bool:
    """The reply proposes tool calls (well-formed or not) rather than answering."""
    return bool(message.tool_calls or message.invalid_tool_calls)


def make_think(setup: AgentSetup) -> Callable[[AgentState], Body[AgentUpdate]]:
    """Build the ``think`` node for ``setup``."""
    system = SystemMessage(setup.system_prompt)  # the same for every call: made once

    def think(state: AgentState) -> Body[AgentUpdate]:
        run = setup.for_run()
        spent = budget_stop(state, run.limits)
        if spent:  # a step or trial whose question spent the budget before it began
            return {"outcome": spent, "to_run": []}
        messages = state["messages"]
        shown = model_view(messages, run.registry)
        advice = advice_for(messages, run.limits)
        tools = run.usable_tools(state)
        last_call = bool(tools) and rounds_spent(state, run.limits)
        if last_call:
            advice = [*advice, ROUNDS_SPENT]
        prompt = advised(with_reflection([system, *shown], state), advice)
        choice = "none" if last_call else None
        request = ModelRequest(prompt=prompt, tools=tools, tool_choice=choice)
        reply = yield from call_model(run, request, state)
        if last_call:
            return answer_without_calls(reply, run.limits.max_tool_rounds)
        outcome: Outcome | None = None if wants_tools(reply.message) else {"status": "answered"}
        return {
            "messages": [reply.message],
            "trajectory": [reply.event],
            "outcome": outcome,
            "to_run": [],
        }

    return think


def answer_without_calls(reply: ModelReply, rounds: int | None) -> AgentUpdate:
    """The update for a reply asked with tools off: its words are the answer, and any call
    it proposed all the same is dropped unrun; with no words, the question concludes."""
    message, event = reply.message, reply.event
    if wants_tools(message):  # only its words: no call may reach the next prompt either
        message = AIMessage(
            content=message.text,
            id=message.id,
            response_metadata=message.response_metadata,
            usage_metadata=message.usage_metadata,
        )
        event = {**event, "tool_calls": []}
    if not message.text.strip():
        reason = ROUND_LIMIT.format(limit=rounds)
        return {
            "trajectory": [event],
            "outcome": {"status": "incomplete", "reason": reason},
            "to_run": [],
        }
    return {
        "messages": [message],
        "trajectory": [event],
        "to_run": [],
        "outcome": {"status": "answered"},
    }
