"""The question's budgets: model calls (``max_model_calls``), tokens, tool calls and time of work.

Every model call and tool run of a question counts — thinking, planning,
judging, the closing answer, and the work of a subgraph run per plan step or
trial (it arrives as ``earlier_work``). A node checks :func:`budget_stop` before
a model call and after a round of tools; once a budget is spent, one last call
may conclude the question (:func:`may_conclude`), and no more. So a run makes
at most one model call past its budget, whatever the pattern.

A halt ends the question the same way, without the closing call: a model call
that timed out, went silent or kept failing marks its event with ``halt``, and
every later check reads it as a spent budget.

The time budget counts work, not waiting: model-call latencies and tool
durations, as the trajectory records them. Time spent waiting for a person
is in neither, and a resumed run reads the same record from its state.

A summary that fits a prompt to the context window is a model call that costs
tokens and time, but ``max_model_calls`` leaves it out: it counts the calls a run
makes to think, not the upkeep of its prompt. ``max_tool_rounds`` is not a
budget that stops the question: once its rounds are made, the next model call
is asked with tools off and its reply is the answer (:func:`rounds_spent`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from reasoning_graphs.context import Limits
from reasoning_graphs.history import Fold, Indexed, folded
from reasoning_graphs.nodes.guards.call_limits import (
    Counts,
    Tally,
    model_calls_room,
    model_limit_stop,
    split_limits,
    work_counts,
)
from reasoning_graphs.question import executed_calls, question_number, this_question
from reasoning_graphs.state import EXECUTED, Outcome, ThoughtEvent, TrajectoryEvent, Work

MODEL_CALL_LIMIT = "reached the limit of {limit} model calls"
EARLIER_STEP_LIMIT = "reached the limit of {limit} model steps"
"""How earlier releases worded :data:`MODEL_CALL_LIMIT`; threads saved then still hold it."""
TOKEN_LIMIT = "spent {used} of {budget} tokens"
TOOL_LIMIT = "reached the limit of {limit} tool calls"
TIME_LIMIT = "spent {used:.1f} of {budget} seconds of work"


@dataclass(frozen=True)
class Spending:
    """What a question has spent so far: model calls (summaries apart), tokens, tool calls,
    milliseconds, and the rounds of tool calls the model began."""

    calls: int = 0
    tokens: int = 0
    tool_calls: int = 0
    ms: float = 0.0
    halt: str | None = None
    rounds: int = 0

    def after(self, work: Work) -> Spending:
        halt = self.halt or work.get("halt")
        if work["kind"] == "action":
            return replace(self, tool_calls=self.tool_calls + 1, ms=self.ms + work["ms"], halt=halt)
        return replace(
            self,
            calls=self.calls + (not work.get("summary")),
            tokens=self.tokens + work["tokens"],
            ms=self.ms + work["ms"],
            halt=halt,
            rounds=self.rounds + bool(work.get("tool_round")),
        )

    def plus(self, later: Spending) -> Spending:
        """This spending followed by ``later``'s."""
        return Spending(
            calls=self.calls + later.calls,
            tokens=self.tokens + later.tokens,
            tool_calls=self.tool_calls + later.tool_calls,
            ms=self.ms + later.ms,
            halt=self.halt or later.halt,
            rounds=self.rounds + later.rounds,
        )


def _spend(by_turn: dict[int, Spending], event: TrajectoryEvent) -> dict[int, Spending]:
    spending = by_turn.get(event["turn"], Spending())
    for work in _as_work(event):
        spending = spending.after(work)
    by_turn[event["turn"]] = spending
    return by_turn


SPENDING = Fold("spending", dict, _spend)
"""What each question's events have spent, by question (``turn``)."""


def question_work(state: Mapping[str, Any]) -> list[Work]:
    """Every model call and tool run of the question so far, in order, across graphs.

    A pattern that runs a subgraph per step or trial hands it the work done
    before (``earlier_work``).
    """
    earlier: list[Work] = state.get("earlier_work") or []
    events = this_question(state.get("trajectory"), state["messages"])
    return Indexed([*earlier, *(work for event in events for work in _as_work(event))])


def question_spending(state: Mapping[str, Any]) -> Spending:
    """The question's spending so far (see :func:`question_work`), read from running totals."""
    earlier = _total(state.get("earlier_work") or [])
    by_turn = folded(state.get("trajectory"), SPENDING)
    return earlier.plus(by_turn.get(question_number(state["messages"]), Spending()))


def budget_stop(state: Mapping[str, Any], limits: Limits) -> Outcome | None:
    """An incomplete outcome when a budget is spent, else ``None`` (a ``None`` budget never is).

    A model-call limit a middleware set (:mod:`~.call_limits`) comes first: once it is
    reached, not even the closing call is made (:func:`may_conclude`).

    Raises:
        ModelCallLimitExceededError: That limit says ``exit_behavior="error"``.
    """
    return call_limit_stop(state, limits) or exhausted(limits, question_spending(state))


def call_limit_stop(state: Mapping[str, Any], limits: Limits) -> Outcome | None:
    """Why no more model calls may be made, when a middleware's model-call limit is reached
    (see :mod:`~.call_limits`); ``None`` at once for a run with none.

    Raises:
        ModelCallLimitExceededError: That limit says ``exit_behavior="error"``.
    """
    if not limits.call_limits:
        return None
    model_limits, _ = split_limits(limits.call_limits)
    return model_limit_stop(model_limits, call_counts(state)) if model_limits else None


def model_calls_left(state: Mapping[str, Any], limits: Limits, spending: Spending) -> int | None:
    """How many model calls the question may still start before its closing one
    (``None``: no limit): what ``max_model_calls`` leaves after ``spending``, and no more
    than a middleware's model-call limit allows."""
    left = None if limits.max_model_calls is None else limits.max_model_calls - spending.calls
    if not limits.call_limits:
        return left
    model_limits, _ = split_limits(limits.call_limits)
    if not model_limits:
        return left
    room = model_calls_room(model_limits, call_counts(state))
    return room if left is None else min(left, room)


def tool_tally(state: Mapping[str, Any], limits: Limits) -> Tally | None:
    """A tally of ``state``'s counts for a triage to count its calls on, when the run has
    tool-call limits (``None`` otherwise)."""
    if not limits.call_limits:
        return None
    _, tool_limits = split_limits(limits.call_limits)
    return Tally(tool_limits, call_counts(state)) if tool_limits else None


def call_counts(state: Mapping[str, Any]) -> Counts:
    """What the call limits count in ``state``: the question's calls, and the calls of the
    thread's earlier questions (a step's or trial's graph is handed those as
    ``thread_counts``)."""
    return Counts(question=work_counts(question_work(state)), before=_earlier_questions(state))


def _earlier_questions(state: Mapping[str, Any]) -> Counter[str]:
    """The calls of the thread's questions before the current one, by what the call
    limits count (without zeros)."""
    turn = question_number(state["messages"])
    earlier = [
        work
        for event in state.get("trajectory") or ()
        if event.get("turn", turn) < turn
        for work in _as_work(event)
    ]
    return +(Counter(state.get("thread_counts") or {}) + work_counts(earlier))


def budget_stop_after(
    state: Mapping[str, Any], limits: Limits, events: Sequence[TrajectoryEvent]
) -> Outcome | None:
    """:func:`budget_stop` once ``events``, not yet in the state, have joined the question."""
    later = _total([work for event in events for work in _as_work(event)])
    return exhausted(limits, question_spending(state).plus(later))


def rounds_spent(state: Mapping[str, Any], limits: Limits) -> bool:
    """Whether the question has made every round of tool calls it may (``max_tool_rounds``),
    so that its next model call is asked with tools off, for the answer."""
    limit = limits.max_tool_rounds
    return limit is not None and question_spending(state).rounds >= limit


def calls_past_budget(state: Mapping[str, Any], limits: Limits) -> int:
    """How many model calls of the question started when a budget was already spent."""
    past, spending = 0, Spending()
    for work in question_work(state):
        is_step = work["kind"] == "thought" and not work.get("summary")
        if is_step and exhausted(limits, spending) is not None:
            past += 1
        spending = spending.after(work)
    return past


def may_conclude(state: Mapping[str, Any], limits: Limits) -> bool:
    """Whether the one closing call past the budget is still to be made: not after a
    halt (the model timed out, went silent or kept failing), where asking it again
    would only wait as long once more, nor once a middleware's model-call limit is reached
    (it allows no call past it)."""
    if question_spending(state).halt is not None or call_limit_stop(state, limits) is not None:
        return False
    return calls_past_budget(state, limits) == 0


def tool_calls_left(state: Mapping[str, Any], limits: Limits) -> int | None:
    """How many tool calls the question may still run (``None``: no limit)."""
    if limits.max_tool_calls is None:
        return None
    return max(0, limits.max_tool_calls - question_spending(state).tool_calls)


def turn_call_limit(state: Mapping[str, Any], limits: Limits) -> int:
    """How many calls of the next round may run: the per-turn limit, and no more than
    the question's tool-call budget has left."""
    left = tool_calls_left(state, limits)
    per_turn = limits.max_tool_calls_per_turn
    return per_turn if left is None else min(per_turn, left)


def question_bounds(state: Mapping[str, Any]) -> dict[str, Any]:
    """What a subgraph run for one step or trial must honour of its question:
    the rejections so far, the work already done (model calls and tool runs) and
    the calls that ran (so that a repeat of a pure tool's call is answered from its result),
    and the calls of the thread's earlier questions, for the call limits that count them."""
    bounds: dict[str, Any] = {
        "rejected": dict(state.get("rejected") or {}),
        "earlier_work": question_work(state),
        "earlier_calls": executed_calls(state),
    }
    before = _earlier_questions(state)
    if before:
        bounds["thread_counts"] = dict(before)
    return bounds


def exhausted(limits: Limits, spending: Spending) -> Outcome | None:
    """Why ``spending`` has used up a budget (or was halted), if it has: :func:`budget_stop`
    for a spending already summed."""
    if spending.halt is not None:
        return _incomplete(spending.halt)
    if limits.max_model_calls is not None and spending.calls >= limits.max_model_calls:
        return _incomplete(MODEL_CALL_LIMIT.format(limit=limits.max_model_calls))
    if limits.token_budget is not None and spending.tokens >= limits.token_budget:
        return _incomplete(TOKEN_LIMIT.format(used=spending.tokens, budget=limits.token_budget))
    if limits.max_tool_calls is not None and spending.tool_calls >= limits.max_tool_calls:
        return _incomplete(TOOL_LIMIT.format(limit=limits.max_tool_calls))
    if limits.time_budget is not None and spending.ms >= limits.time_budget * 1000:
        return _incomplete(TIME_LIMIT.format(used=spending.ms / 1000, budget=limits.time_budget))
    return None


TOTAL = Fold("total", Spending, Spending.after)
"""What a list of work has spent in all."""


def _total(work: Sequence[Work]) -> Spending:
    """What ``work`` spent: a running total for the work a step's subgraph is handed, which
    every budget check of the step reads again."""
    return folded(work, TOTAL)


def _as_work(event: TrajectoryEvent) -> list[Work]:
    """The event as the budgets count it: a model call with the seam's calls before it
    (summaries, continuations); a call that never ran, a call of an upkeep tool (a plan's
    ticks), or a record of something else (a trial's evaluation), costs nothing."""
    if event["kind"] == "thought":
        call = thought_work(event)
        if event["tool_calls"]:
            call["tool_round"] = True
        if "halt" in event:
            call["halt"] = event["halt"]
        return [*event.get("seam_calls", []), call]
    if event["kind"] == "action" and event["decision"] in EXECUTED and not event.get("upkeep"):
        return [
            {
                "kind": "action",
                "tokens": 0,
                "ms": event.get("duration_ms", 0.0),
                "tool": event.get("tool", ""),
            }
        ]
    return []


def thought_work(event: ThoughtEvent) -> Work:
    """One model call as the budgets count it: its tokens and time, and whether it was a
    summary (which is no step)."""
    work = Work(
        kind="thought",
        tokens=event["input_tokens"] + event["output_tokens"],
        ms=event.get("latency_ms", 0.0),
    )
    if event.get("summary"):
        work["summary"] = True
    return work


def _incomplete(reason: str) -> Outcome:
    return {"status": "incomplete", "reason": reason}
