"""Batches: model calls a pattern starts together, kept to the question's budgets.

Chain-of-Thought's samples and LATS's candidate steps and judges are
independent calls, so they run at once. Checked one by one, each would take
the whole budget left as its own — ten samples on a 1,500-token budget spent
15,000 tokens. So a batch is sized before it starts and shares what is left
while it runs:

- It starts no more calls than the model-call budget has left, nor more than the
  tokens left pay the prompts of with room to reply; but at least one, so a
  search always moves. A LATS candidate counts with the judge it will need,
  and together they may end one call past the budget. Either way, that is the
  question's one call past its budget
  (:func:`~reasoning_graphs.nodes.guards.budget.may_conclude`).
- Its calls share the tokens left, one
  :class:`~reasoning_graphs.nodes.model.watch.SharedTokens`: each call pays its
  prompt there as its turn comes (a run's ``max_concurrency`` may queue them)
  and does not start when it cannot; each call's watch spends its chunks
  there. Once it is empty every call stops at its next chunk. So the batch
  ends within the tokens left, plus the chunk each call was writing.
- A call a budget stopped gives no result; the others' results stand. When
  none finished, or a call halted (timed out, went silent, kept failing), the
  question stops as for a single stopped call (:class:`QuestionStopped`).
- A batch that gives fewer results than asked leaves a :class:`BatchCut` in
  the trajectory, saying which budget cut it.

A batch within its budgets runs exactly as it would without them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, Literal, TypeVar, cast

from typing_extensions import TypedDict

from reasoning_graphs.context import Limits
from reasoning_graphs.effects import Body, gather_bodies
from reasoning_graphs.nodes.guards.budget import (
    budget_stop_after,
    model_calls_left,
    question_spending,
)
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.guards.stop import QuestionStopped
from reasoning_graphs.nodes.model.watch import TIME_SPENT, SharedTokens
from reasoning_graphs.question import model_calls_used, question_number
from reasoning_graphs.state import ThoughtEvent

T = TypeVar("T")

BudgetName = Literal["model_calls", "tokens", "time"]
"""The budget that cut a batch (trajectories of earlier releases say ``"steps"`` for
``"model_calls"``)."""

STARTED_FEWER = "{started} of {asked} calls started: the {budget} budget had room for no more"
FINISHED_FEWER = (
    "{finished} of {planned} calls finished: the {budget} budget ran out while they ran"
)
BUDGET_WORDS: dict[BudgetName, str] = {
    "model_calls": "model-call",
    "tokens": "token",
    "time": "time",
}
# A reply that only repeats these is no answer (see reasoning_graphs.nodes.guards.honest).
own_texts(STARTED_FEWER, FINISHED_FEWER)


class _Skipped(Enum):
    NOT_STARTED = "when its turn came, the batch's tokens could not pay its prompt"


class BatchCut(TypedDict):
    """A batch that gave fewer results than asked, as the trajectory records it.

    Attributes:
        turn, step: The question, and the step its calls made.
        asked: Calls the pattern asked for.
        started: Calls that started; the budgets left no room for the others.
        finished: Calls that ran to the end; a budget stopped the others.
        budget: The budget that cut the batch.
        reason: The same in words.
    """

    kind: Literal["batch_cut"]
    turn: int
    step: int
    asked: int
    started: int
    finished: int
    budget: BudgetName
    reason: str


@dataclass(frozen=True)
class Batched(Generic[T]):
    """What a batch gave.

    Attributes:
        results: Each planned call's result, in order; ``None`` where a budget stopped
            it or left it no room to start.
        stopped: The events of the calls a budget stopped: they cost, so they are recorded.
        cut: Why the batch gave fewer results than asked, if it did.
    """

    results: list[T | None]
    stopped: list[ThoughtEvent]
    cut: BatchCut | None

    @property
    def finished(self) -> list[T]:
        """The results of the calls that ran to the end, in order."""
        return [result for result in self.results if result is not None]

    @property
    def records(self) -> list[ThoughtEvent | BatchCut]:
        """What the trajectory keeps of the batch besides the finished calls' own events."""
        return [*self.stopped, *([self.cut] if self.cut else [])]


@dataclass(frozen=True)
class Batch:
    """A batch sized to the question's budgets (made by :func:`plan_batch`).

    Attributes:
        size: How many calls to start.
        shared_tokens: The tokens their replies share (``None`` for a single call, or
            without a token budget): pass it on in each call's request.
    """

    state: Mapping[str, Any]
    limits: Limits
    asked: int
    size: int
    prompt_tokens: int
    shared_tokens: SharedTokens | None
    short_by: BudgetName | None

    def gather(
        self, bodies: Sequence[Body[T]], events_of: Callable[[T], Sequence[ThoughtEvent]]
    ) -> Body[Batched[T]]:
        """Run the batch's ``bodies`` (at most :attr:`size`) at once.

        Raises:
            QuestionStopped: A call halted, or a budget stopped every call. Every
                call's cost (``events_of`` a finished result) is in it.
        """
        ran = yield from gather_bodies([self._when_its_turn_comes(body) for body in bodies])
        stops = [result for result in ran if isinstance(result, QuestionStopped)]
        halted = [stop for stop in stops if any("halt" in event for event in stop.events)]
        if halted:
            raise self._stop(halted[0], ran, events_of, cut=None)
        results = [None if _no_result(result) else cast(T, result) for result in ran]
        started = sum(result is not _Skipped.NOT_STARTED for result in ran)
        finished = sum(not _no_result(result) for result in ran)
        cut = self._cut(len(ran), started, finished, stops)
        if stops and not finished:
            raise self._stop(stops[0], ran, events_of, cut=cut)
        return Batched(results, [stop.events[-1] for stop in stops], cut)

    def _when_its_turn_comes(self, body: Body[T]) -> Body[T | QuestionStopped | _Skipped]:
        """``body``, if the batch's tokens pay its prompt when its turn comes; a stop as a value."""
        shared = self.shared_tokens
        if shared is not None and not shared.pay_prompt(self.prompt_tokens):
            body.close()
            return _Skipped.NOT_STARTED
        try:
            return (yield from body)
        except QuestionStopped as stop:
            return stop

    def _cut(
        self, planned: int, started: int, finished: int, stops: Sequence[QuestionStopped]
    ) -> BatchCut | None:
        """The record of a batch that gives fewer results than asked (a single call is no
        batch: its own stop says why)."""
        budget: BudgetName
        if self.asked <= 1:
            return None
        if finished < planned:  # a budget ran out while the calls ran
            by_time = any(stop.events[-1].get("stopped") == TIME_SPENT for stop in stops)
            budget = "time" if by_time else "tokens"
            reason = FINISHED_FEWER.format(
                finished=finished, planned=planned, budget=BUDGET_WORDS[budget]
            )
        elif self.short_by is not None:
            budget = self.short_by
            reason = STARTED_FEWER.format(
                started=started, asked=self.asked, budget=BUDGET_WORDS[budget]
            )
        else:
            return None
        return BatchCut(
            kind="batch_cut",
            turn=question_number(self.state["messages"]),
            step=model_calls_used(self.state) + 1,
            asked=self.asked,
            started=started,
            finished=finished,
            budget=budget,
            reason=reason,
        )

    def _stop(
        self,
        first: QuestionStopped,
        ran: Sequence[T | QuestionStopped | _Skipped],
        events_of: Callable[[T], Sequence[ThoughtEvent]],
        cut: BatchCut | None,
    ) -> QuestionStopped:
        """The question's stop: every call's cost, and the budget the whole batch spent
        (a halt's own reason stands)."""
        events: list[ThoughtEvent] = []
        for result in ran:
            if isinstance(result, QuestionStopped):
                events.extend(result.events)
            elif result is not _Skipped.NOT_STARTED:
                events.extend(events_of(result))
        outcome = first.outcome
        if not any("halt" in event for event in first.events):
            outcome = budget_stop_after(self.state, self.limits, events) or outcome
        return QuestionStopped(outcome, events, records=[cut] if cut else [])


def plan_batch(
    state: Mapping[str, Any],
    limits: Limits,
    asked: int,
    *,
    prompt_tokens: int,
    calls_each: int = 1,
) -> Batch:
    """Size a batch of ``asked`` calls to what the question's budgets have left.

    Args:
        state: The question's state (its spending so far).
        limits: The run's budgets.
        asked: Calls the pattern wants.
        prompt_tokens: The estimated prompt of one call (the largest, if they differ).
        calls_each: Model calls each started call stands for, counting those it
            will need later (a LATS candidate and its judge: 2).
    """
    spending = question_spending(state)
    calls_left = model_calls_left(state, limits, spending)
    tokens_left = None if limits.token_budget is None else limits.token_budget - spending.tokens
    room: dict[BudgetName, int | None] = {
        "model_calls": None if calls_left is None else _calls_room(calls_left, calls_each),
        "tokens": None if tokens_left is None else _prompts_paid(tokens_left, prompt_tokens),
    }
    tight = {name: calls for name, calls in room.items() if calls is not None and calls < asked}
    short_by = min(tight, key=tight.__getitem__, default=None)
    size = max(1, tight[short_by]) if short_by is not None else asked
    shared = SharedTokens(tokens_left) if size > 1 and tokens_left is not None else None
    short_by = short_by if size < asked else None
    return Batch(state, limits, asked, size, prompt_tokens, shared, short_by)


def _calls_room(left: int, calls_each: int) -> int:
    """Calls the ``left`` model calls let start: no more than that, and, with the calls each needs
    later, ending at most one call past the budget (the one a question may make)."""
    return max(0, min(left, (left + 1) // calls_each))


def _prompts_paid(left: int, prompt_tokens: int) -> int:
    """How many prompts the tokens ``left`` pay for, with a token to spare for the replies."""
    return max(0, left - 1) // max(1, prompt_tokens)


def _no_result(result: object) -> bool:
    return isinstance(result, QuestionStopped) or result is _Skipped.NOT_STARTED
