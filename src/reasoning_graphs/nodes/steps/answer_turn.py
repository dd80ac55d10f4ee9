"""The answer turn: a model call of the loop asked with tools off, whose reply is the answer.

Two things make the next call an answer turn:

- the question has made every round of tool calls it may (``max_tool_rounds``,
  which the modes preset);
- its latest ``repeat_round_limit`` rounds were made only of calls of pure tools
  answered from an identical earlier call
  (:func:`~reasoning_graphs.nodes.guards.loops.repeat_stop`): the model keeps asking
  for what it already has, and asking again cannot change it.

Either way the model is told why, in its prompt, and answers in its own turn: a reply
with words ends the question answered, as a reply without calls always does. A
model that proposes calls all the same gets none run; with no words besides them,
the question ends incomplete for that reason, and ``finish`` asks once more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import BaseTool

from reasoning_graphs.context import Limits
from reasoning_graphs.nodes.guards.budget import rounds_spent
from reasoning_graphs.nodes.guards.loops import repeat_stop
from reasoning_graphs.nodes.model.call import ModelReply, ModelRequest
from reasoning_graphs.nodes.steps.prompts import REPEATS_ANSWERED, ROUNDS_SPENT
from reasoning_graphs.state import AgentUpdate

ROUND_LIMIT = "reached the limit of {limit} tool round(s)"
ANSWER_TOKENS = 1000
"""Tokens an answer asked with tools off (an answer turn, the closing call) may stream,
whatever the model's own limit (many have none): an answer, not a flood; what it said by
then is kept."""


@dataclass(frozen=True)
class AnswerTurn:
    """Why the next call is asked with tools off.

    Attributes:
        advice: What the model is told in that call's prompt.
        reason: The question's reason for ending incomplete if the reply holds no words.
    """

    advice: str
    reason: str


def answer_turn(state: Mapping[str, Any], limits: Limits) -> AnswerTurn | None:
    """The answer turn the question's next model call is, if it is one."""
    if rounds_spent(state, limits):
        return AnswerTurn(ROUNDS_SPENT, ROUND_LIMIT.format(limit=limits.max_tool_rounds))
    repeated = repeat_stop(state, limits.repeat_round_limit)
    if repeated is not None:
        return AnswerTurn(REPEATS_ANSWERED, repeated["reason"])
    return None


def tools_off(prompt: Sequence[BaseMessage], tools: Sequence[BaseTool]) -> ModelRequest:
    """The request for an answer asked with tools off: the tools stay described, none may
    be called, and the reply is capped at :data:`ANSWER_TOKENS`."""
    return ModelRequest(
        prompt=prompt,
        tools=tools,
        tool_choice="none" if tools else None,
        reply_tokens=ANSWER_TOKENS,
    )


def wants_tools(message: AIMessage) -> bool:
    """The reply proposes tool calls (well-formed or not) rather than answering."""
    return bool(message.tool_calls or message.invalid_tool_calls)


def answer_without_calls(reply: ModelReply, turn: AnswerTurn) -> AgentUpdate:
    """The update for the reply of an answer turn: its words are the answer, and any call
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
        return {
            "trajectory": [event],
            "outcome": {"status": "incomplete", "reason": turn.reason},
            "to_run": [],
        }
    return {
        "messages": [message],
        "trajectory": [event],
        "to_run": [],
        "outcome": {"status": "answered"},
    }
