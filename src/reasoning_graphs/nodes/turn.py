"""Facts about the current turn, derived from the state rather than stored twice.

A turn is everything since the latest human message: the budgets count the
model steps and tokens of the turn, and repetition is judged within it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from reasoning_graphs.tools.output import content_text
from reasoning_graphs.tools.registry import ToolRegistry

EXECUTED = frozenset({"auto", "approved", "edited"})
"""Decisions under which a tool really ran (its observation is the tool's own output)."""


def decision_of(message: ToolMessage) -> str:
    """How the runtime handled the call this observation answers."""
    return str(message.response_metadata.get("decision", "auto"))


def was_executed(message: AnyMessage) -> bool:
    return isinstance(message, ToolMessage) and decision_of(message) in EXECUTED


def turn_number(messages: Sequence[AnyMessage]) -> int:
    """How many human messages the conversation has (the current turn's number)."""
    return sum(isinstance(m, HumanMessage) for m in messages)


def turn_messages(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The messages after the latest human message."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return list(messages[index + 1 :])
    return list(messages)


def turn_answers(messages: Sequence[AnyMessage]) -> dict[str, ToolMessage]:
    """The observations of the current turn, by the id of the call each answers."""
    return {m.tool_call_id: m for m in turn_messages(messages) if isinstance(m, ToolMessage)}


def last_ai_message(messages: Sequence[AnyMessage]) -> AIMessage:
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message
    raise ValueError("The conversation has no model message yet.")


def thought_events(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """This graph's record of every model call of the current question, in order.

    Counted from the trajectory, not from the messages: a provider that reuses a
    message id makes ``add_messages`` replace an earlier reply, but every call
    still leaves its event.
    """
    turn = turn_number(state["messages"])
    return [
        event
        for event in state.get("trajectory") or []
        if event.get("kind") == "thought" and event.get("turn") == turn
    ]


def steps_used(state: Mapping[str, Any]) -> int:
    """Model calls this graph has made for the current question."""
    return len(thought_events(state))


def question_calls(state: Mapping[str, Any]) -> list[int]:
    """Tokens of every model call of the question so far, in order, across graphs.

    A pattern that runs a subgraph per step or trial hands it the calls made
    before (``earlier_calls``), so budgets cover the whole question.
    """
    own = [
        event.get("input_tokens", 0) + event.get("output_tokens", 0)
        for event in thought_events(state)
    ]
    return [*(state.get("earlier_calls") or []), *own]


def call_signature(name: str, args: Mapping[str, Any]) -> str:
    """A stable key for "the same call": tool name plus canonical arguments."""
    return f"{name}:{json.dumps(args, sort_keys=True, default=str)}"


def describe_call(name: str, args: Mapping[str, Any]) -> str:
    """A call as people read it: ``calculator(expression='23*17+4')``."""
    shown = ", ".join(f"{key}={value!r}" for key, value in args.items())
    return f"{name}({shown})"


def reusable_results(
    messages: Sequence[AnyMessage], registry: ToolRegistry
) -> dict[str, tuple[str, str]]:
    """Read-only results of this turn that are still current: signature → (text, status).

    A read-only (concurrency-safe) call repeated with the same arguments would
    return the same text or the same error, unless a stateful call ran in
    between — so any successful stateful call forgets what was read before it.
    """
    calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
    results: dict[str, tuple[str, str]] = {}
    for message in turn_messages(messages):
        if isinstance(message, AIMessage):
            calls.update({c["id"]: (c["name"], c["args"]) for c in message.tool_calls})
        elif was_executed(message) and message.tool_call_id in calls:
            name, args = calls[message.tool_call_id]
            if not registry.is_read_only(name):
                if message.status == "success":
                    results.clear()
                continue
            results[call_signature(name, args)] = (content_text(message.content), message.status)
    return results


def successful_observations(
    messages: Sequence[AnyMessage], limit: int = 3
) -> list[tuple[str, str]]:
    """The latest successful tool results of this turn as (call, observation) pairs."""
    calls: dict[str, str] = {}
    found: list[tuple[str, str]] = []
    for message in turn_messages(messages):
        if isinstance(message, AIMessage):
            calls.update({c["id"]: describe_call(c["name"], c["args"]) for c in message.tool_calls})
        elif was_executed(message) and message.status == "success":
            call = calls.get(message.tool_call_id)
            text = content_text(message.content)
            if call and (call, text) not in found:
                found.append((call, text))
    return found[-limit:]
