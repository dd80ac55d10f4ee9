"""What the loop's guards tell the model: in its next prompt, never in an observation.

The conversation keeps every observation exactly as the tool gave it (content,
artifact, status), as under LangGraph's ``ToolNode``, so a reader, an audit or
another agent sees what really came back. A guard's advice is worked out again
from the state before each model call that follows a tool round, added at the
end of that prompt only, and never saved:

- after ``empty_result_streak`` empty or "not found" results in a row, the
  latest round among them (:func:`~reasoning_graphs.nodes.guards.loops.empty_streak`),
  to change strategy;
- a call of the latest round that ran and returned exactly what the identical
  earlier call of the question returned, that its result has not changed;
- a call of a pure tool answered from an identical earlier call (decision
  ``reused``), that it was not run again;
- a request of a tool's ``Command`` that the loop did not carry out (see
  :func:`~reasoning_graphs.metadata.advice_of`).

Examples:
    >>> from langchain_core.messages import HumanMessage
    >>> advised([HumanMessage("Observation: 42")], ["Use it."])[-1].text
    'Observation: 42\\n\\n(Note from the runtime, not from a tool or the user: Use it.)'
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, ToolMessage

from reasoning_graphs.context import Limits
from reasoning_graphs.metadata import advice_of, decision_of
from reasoning_graphs.nodes.guards.loops import (
    OBSERVED,
    empty_streak,
    is_empty_result,
    same_results,
    tool_rounds,
)
from reasoning_graphs.question import describe_call

NOTE = "(Note from the runtime, not from a tool or the user: {advice})"
CHANGE_STRATEGY = (
    "the latest {count} results in a row were empty or found nothing. Change strategy: "
    "try other terms or another tool, or answer from what you already have."
)
REUSED = (
    "{calls} was answered from the identical earlier call, not run again: its tool is a pure "
    "function of its arguments, so the result cannot differ. Use that result."
)
SAME_RESULT = (
    "{calls} ran again and returned the same result as the identical earlier call: nothing "
    "it reports has changed. Use that result, wait for a change only if the task needs it, "
    "or answer."
)


def advice_for(messages: Sequence[AnyMessage], limits: Limits) -> list[str]:
    """The guards' advice for the model call that follows the latest tool round (empty
    when the conversation does not end with that round's observations)."""
    if not messages or not isinstance(messages[-1], ToolMessage):
        return []
    rounds = tool_rounds(messages)
    if not rounds:
        return []
    latest = rounds[-1]
    calls = {call["id"]: call for call in latest.message.tool_calls}
    advice = [note for answer in latest.answers for note in advice_of(answer)]
    reused = [
        describe_call(calls[a.tool_call_id]["name"], calls[a.tool_call_id]["args"])
        for a in latest.answers
        if decision_of(a) == "reused" and a.tool_call_id in calls
    ]
    if reused:
        advice.append(REUSED.format(calls=", ".join(reused)))
    same = [describe_call(call["name"], call["args"]) for call in same_results(messages)]
    if same:
        advice.append(SAME_RESULT.format(calls=", ".join(same)))
    streak = empty_streak(rounds)
    fresh = any(decision_of(a) in OBSERVED and is_empty_result(a) for a in latest.answers)
    if fresh and streak >= limits.empty_result_streak:
        advice.append(CHANGE_STRATEGY.format(count=streak))
    return advice


def advised(prompt: Sequence[BaseMessage], advice: Sequence[str]) -> list[BaseMessage]:
    """``prompt`` with ``advice`` at its end, as the runtime's note (:func:`with_note`)."""
    if not advice:
        return list(prompt)
    return with_note(prompt, NOTE.format(advice=" ".join(advice)))


def with_note(prompt: Sequence[BaseMessage], note: str) -> list[BaseMessage]:
    """``prompt`` with ``note`` at its end: in the last user turn when the prompt ends
    with one (the text format's observation), else as a user turn of its own."""
    *before, last = prompt
    if isinstance(last, HumanMessage):
        return [*before, HumanMessage(f"{last.text}\n\n{note}")]
    return [*before, last, HumanMessage(note)]
