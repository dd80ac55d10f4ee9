"""Trajectory events: one record per thought and per action, kept in the state.

They let a person (or a benchmark) see every step of a run — text, tool,
arguments, observation, tokens and latency — without re-reading the messages.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage

from reasoning_graphs.nodes.model.tokens import estimate_tokens, prompt_tokens
from reasoning_graphs.question import model_calls_used, question_number
from reasoning_graphs.state import ActionEvent, CallDecision, ThoughtEvent


def thought_event(
    state: Mapping[str, Any], *, reply: AIMessage, prompt: Sequence[BaseMessage], latency_ms: float
) -> ThoughtEvent:
    """Record the model call that makes the turn's next step.

    Token counts come from the provider when it reports them, else an estimate
    that counts CJK text as such (see :mod:`~reasoning_graphs.nodes.model.tokens`).
    """
    usage = reply.usage_metadata
    if usage:
        input_tokens, output_tokens = usage["input_tokens"], usage["output_tokens"]
    else:
        input_tokens = prompt_tokens(prompt, state["messages"])
        output_tokens = estimate_tokens([reply])
    return ThoughtEvent(
        kind="thought",
        turn=question_number(state["messages"]),
        step=model_calls_used(state) + 1,
        text=reply.text,
        tool_calls=[call["name"] for call in reply.tool_calls],
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        latency_ms=round(latency_ms, 2),
    )


def action_event(
    *,
    turn: int,
    step: int,
    call_id: str,
    tool: str,
    args: dict[str, Any],
    observation: str,
    status: Literal["success", "error"],
    decision: CallDecision,
    duration_ms: float = 0.0,
) -> ActionEvent:
    """Record what became of one tool call."""
    return ActionEvent(
        kind="action",
        turn=turn,
        step=step,
        id=call_id,
        tool=tool,
        args=args,
        observation=observation,
        status=status,
        decision=decision,
        duration_ms=round(duration_ms, 2),
    )
