"""Trajectory events: one record per thought and per action, kept in the state.

They let a person (or a benchmark) see every step of a run — text, tool,
arguments, observation, tokens and latency — without re-reading the messages.

An action event is the record of how its call was settled: the call's
observation in the conversation carries the same decision, marked from the
event by :func:`record_call` and set nowhere else, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from reasoning_graphs.metadata import EDITED_CALL, with_decision
from reasoning_graphs.nodes.model.tokens import estimate_tokens, prompt_tokens
from reasoning_graphs.question import model_calls_used, question_number
from reasoning_graphs.state import ActionEvent, CallDecision, ThoughtEvent
from reasoning_graphs.tools.output import content_text


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


def record_call(
    call: Mapping[str, Any],
    message: ToolMessage,
    decision: CallDecision,
    *,
    turn: int,
    step: int,
    observation: str | None = None,
    duration_ms: float = 0.0,
    direct: bool = False,
    acted: bool = False,
) -> tuple[ToolMessage, ActionEvent]:
    """The record of ``call`` (a tool call, or a cleared one) settled as ``decision``, and its
    observation ``message`` marked from that record. Every step that settles or runs a call
    records it here: ``approve`` one settled without running, ``act`` one that ran, LLM
    Compiler's ``schedule`` the calls of a pass.

    ``observation``: the text the event keeps, when not the message's own (cut when long);
    ``direct`` and ``acted``: see :func:`~reasoning_graphs.metadata.with_decision`.
    """
    event = action_event(
        turn=turn,
        step=step,
        call_id=call["id"],
        tool=call["name"],
        args=call["args"],
        observation=content_text(message.content) if observation is None else observation,
        status="error" if message.status == "error" else "success",
        decision=decision,
        duration_ms=duration_ms,
    )
    marked = with_decision(message, event["decision"], direct=direct, acted=acted)
    if decision == "edited":  # what ran, beside the call the model's message keeps
        ran = {"name": call["name"], "args": dict(call["args"])}
        metadata = {**marked.response_metadata, EDITED_CALL: ran}
        marked = marked.model_copy(update={"response_metadata": metadata})
    return marked, event
