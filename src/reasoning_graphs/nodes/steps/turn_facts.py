"""What a model turn's calls are settled against, read from the state once per turn.

The triage of a turn (:func:`~reasoning_graphs.nodes.steps.approve.triage_turn`) and the
sending of its calls (:func:`~reasoning_graphs.nodes.steps.act.next_calls`) both need the
same facts of the conversation: which calls have their observation, which approvals were
spent, what a person rejected, what a pure tool already answered, how many calls the
budgets leave. The router that leaves a turn reads them here, once, and hands them on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

from reasoning_graphs.nodes.guards.budget import tool_tally, turn_call_limit
from reasoning_graphs.nodes.guards.call_limits import Tally
from reasoning_graphs.nodes.guards.loops import repeated_failure, tool_rounds
from reasoning_graphs.nodes.model.setup import RunScope
from reasoning_graphs.nodes.steps.seal import spent_seals
from reasoning_graphs.question import (
    answered_ids,
    current_results,
    model_calls_used,
    question_answers,
    question_number,
)
from reasoning_graphs.state import EffectDone


@dataclass(frozen=True)
class TurnFacts:
    """The conversation as one model turn's calls are settled and sent.

    Attributes:
        turn: The question's number.
        step: The model calls the question has made (the step that proposed the calls).
        answered: The id of every call with an observation.
        spent: The approvals a call that ran has used.
        rejected: What a person rejected, by call signature, with their reason.
        results: The results a pure tool's identical call is answered from, by signature.
        answers: The question's observations by call id (read only when ``results`` has any).
        calls_left: The calls this turn may make: the per-turn limit, within the question's.
        repeated: Why nothing of the turn runs, when one of its calls failed with the same
            arguments in the rounds just before (:func:`~.loops.repeated_failure`).
        tally: What the middleware's tool-call limits count, when the run has any
            (:mod:`~reasoning_graphs.nodes.guards.call_limits`): the triage counts the
            turn's calls on it.
    """

    turn: int
    step: int
    answered: Set[str]
    spent: Set[str]
    rejected: Mapping[str, str]
    results: Mapping[str, EffectDone]
    answers: Mapping[str, ToolMessage]
    calls_left: int
    repeated: str | None
    tally: Tally | None = None


def turn_facts(
    run: RunScope, state: Mapping[str, Any], reply: AIMessage | None = None
) -> TurnFacts:
    """The facts of ``state`` the latest turn's calls are settled against; ``reply``: the
    model turn whose calls are checked for a repeated failure (a plan's calls are not)."""
    messages = state["messages"]
    results = current_results(state, run.registry)
    return TurnFacts(
        turn=question_number(messages),
        step=model_calls_used(state),
        answered=answered_ids(messages),
        spent=spent_seals(state.get("trajectory")),
        rejected=state.get("rejected") or {},
        results=results,
        answers=question_answers(messages) if results else {},
        calls_left=turn_call_limit(state, run.limits),
        repeated=None
        if reply is None
        else _repeated_failure(messages, reply, run.limits.repeat_failure_limit),
        tally=tool_tally(state, run.limits),
    )


def _repeated_failure(messages: Sequence[AnyMessage], reply: AIMessage, limit: int) -> str | None:
    """Why the run stops instead of settling ``reply``: one of its calls failed, with the
    same arguments, in the rounds just before."""
    rounds = tool_rounds(messages)
    earlier = rounds[:-1] if rounds and rounds[-1].message is reply else rounds
    for call in reply.tool_calls:
        reason = repeated_failure(earlier, call, limit)
        if reason is not None:
            return reason
    return None
