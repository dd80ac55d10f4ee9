"""Facts about the current turn, derived from the state rather than stored twice.

A turn is everything since the latest human message: the budgets count the
model steps and tokens of the turn, and repetition is judged within it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple, TypeGuard, TypeVar

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from reasoning_graphs.metadata import decision_of, failed_transiently
from reasoning_graphs.state import EXECUTED, ThoughtEvent
from reasoning_graphs.tools.output import content_text
from reasoning_graphs.tools.registry import ToolRegistry


class EarlierResult(NamedTuple):
    """A read-only call's result that a repeat of the call may reuse."""

    text: str
    status: Literal["success", "error"]
    call_id: str


def was_executed(message: AnyMessage) -> TypeGuard[ToolMessage]:
    """Whether ``message`` is the observation of a tool that really ran."""
    return isinstance(message, ToolMessage) and decision_of(message) in EXECUTED


def turn_number(messages: Sequence[AnyMessage]) -> int:
    """How many human messages the conversation has (the current turn's number)."""
    return sum(isinstance(m, HumanMessage) for m in messages)


def request_index(messages: Sequence[AnyMessage]) -> int | None:
    """Where the latest human message is (``None`` before the first)."""
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return index
    return None


def latest_request(messages: Sequence[AnyMessage]) -> str:
    """The text of the latest human message: the question being worked on."""
    index = request_index(messages)
    return "" if index is None else messages[index].text


def turn_messages(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The messages after the latest human message."""
    index = request_index(messages)
    return list(messages if index is None else messages[index + 1 :])


def turn_answers(messages: Sequence[AnyMessage]) -> dict[str, ToolMessage]:
    """The observations of the current turn, by the id of the call each answers."""
    return {m.tool_call_id: m for m in turn_messages(messages) if isinstance(m, ToolMessage)}


def last_ai_message(messages: Sequence[AnyMessage]) -> AIMessage:
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message
    raise ValueError("The conversation has no model message yet.")


Record = TypeVar("Record", bound=Mapping[str, Any])


def this_question(records: Sequence[Record] | None, messages: Sequence[AnyMessage]) -> list[Record]:
    """The records of the question ``messages`` are at, in order.

    What a pattern keeps across a thread's questions (trajectory events, plan
    steps, trials) is tagged with its question's ``turn``, so a follow-up
    question starts clean while the earlier record stays in the checkpoint.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> messages = [HumanMessage("first"), HumanMessage("second")]
        >>> this_question([{"turn": 1, "step": "a"}, {"turn": 2, "step": "b"}], messages)
        [{'turn': 2, 'step': 'b'}]
    """
    turn = turn_number(messages)
    return [record for record in records or [] if record["turn"] == turn]


def thought_events(state: Mapping[str, Any]) -> list[ThoughtEvent]:
    """This graph's record of every model call of the current question, in order.

    Counted from the trajectory, not from the messages: a provider that reuses a
    message id makes ``add_messages`` replace an earlier reply, but every call
    still leaves its event.
    """
    events = this_question(state.get("trajectory"), state["messages"])
    return [event for event in events if event["kind"] == "thought"]


def steps_used(state: Mapping[str, Any]) -> int:
    """Model calls this graph has made for the current question."""
    return len(thought_events(state))


def call_signature(name: str, args: Mapping[str, Any]) -> str:
    """A stable key for "the same call": tool name plus canonical arguments."""
    return f"{name}:{json.dumps(args, sort_keys=True, default=str)}"


def describe_call(name: str, args: Mapping[str, Any]) -> str:
    """A call as people read it: ``calculator(expression='23*17+4')``."""
    shown = ", ".join(f"{key}={value!r}" for key, value in args.items())
    return f"{name}({shown})"


def reusable_results(
    messages: Sequence[AnyMessage], registry: ToolRegistry
) -> dict[str, EarlierResult]:
    """Read-only results of this turn that are still current, by call signature.

    A read-only (concurrency-safe) call repeated with the same arguments would
    return the same text or the same error, unless a stateful call ran in
    between — so any successful stateful call forgets what was read before it.
    A transient failure (a timeout, a lost connection) is not kept: it may pass.
    """
    calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
    results: dict[str, EarlierResult] = {}
    for message in turn_messages(messages):
        if isinstance(message, AIMessage):
            calls.update({c["id"]: (c["name"], c["args"]) for c in message.tool_calls})
        elif was_executed(message) and message.tool_call_id in calls:
            name, args = calls[message.tool_call_id]
            if not registry.is_read_only(name):
                if message.status == "success":
                    results.clear()
                continue
            if failed_transiently(message):
                continue  # it may pass next time: run it again rather than reuse the error
            results[call_signature(name, args)] = EarlierResult(
                content_text(message.content), message.status, message.tool_call_id
            )
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
