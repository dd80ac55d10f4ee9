"""``evaluate`` of Reflexion: grade the latest attempt, then stop or ask for a reflection.

The grader is pluggable: the run's model as a judge (the default), or a
function of the task and the answer — for instance one that runs unit tests on
generated code, which is the signal Reflexion was shown to learn best from. The
node ends the question itself — with the passing answer, or, when the trials
are spent, with the best attempt marked incomplete and scored — so a run never
loops past its bound and the user always gets the strongest answer found, as
the model wrote it (why it is incomplete is a note on its outcome). A passing
attempt that stopped short of an answer (its outcome is incomplete) ends the
question incomplete, as it stopped: a grade does not make it complete.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import AIMessage

from reasoning_graphs.effects import Await, Blocking, Body, Effect
from reasoning_graphs.graphs.reflexion.memory import trials_so_far
from reasoning_graphs.graphs.reflexion.prompts import BEST_ATTEMPT_NOTE, UNGRADED_NOTE
from reasoning_graphs.graphs.reflexion.state import (
    EvaluateUpdate,
    EvaluationEvent,
    ReflexionState,
    Trial,
)
from reasoning_graphs.metadata import answered
from reasoning_graphs.nodes.guards.budget import budget_stop
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.steps.judge import Evaluation, clamp_score, judge
from reasoning_graphs.question import latest_request, question_number
from reasoning_graphs.state import Outcome, ThoughtEvent

Evaluator = Callable[[str, str], Evaluation | Awaitable[Evaluation]]
"""Grades (task, answer): a score from 0 to 1 and feedback. May be sync (it may block —
run tests, call a service; the async face runs it in a worker thread) or async."""

BELOW_THRESHOLD = (
    "no attempt reached the score threshold {threshold:.2f} in {trials} trials; "
    "best score {score:.2f}"
)


def make_evaluate(
    setup: AgentSetup, evaluator: Evaluator | None, *, threshold: float, max_trials: int
) -> Callable[[ReflexionState], Body[EvaluateUpdate]]:
    """Build the ``evaluate`` node: ``evaluator=None`` grades with the model judge."""

    def evaluate(state: ReflexionState) -> Body[EvaluateUpdate]:
        run = setup.for_run()
        bar, trial_limit = run.option("threshold", threshold), run.option("max_trials", max_trials)
        task, answer = latest_request(state["messages"]), state["attempt"]["answer"]
        spent = budget_stop(state, run.limits)
        if evaluator is None and spent:
            return _ungraded(answer, spent)  # judging would be a call past the budget
        evaluation, calls = yield from _grade(run, evaluator, task, answer, state)
        done = Trial(
            turn=question_number(state["messages"]),
            trial=len(trials_so_far(state)) + 1,
            answer=answer,
            outcome=state["attempt"]["outcome"],
            score=evaluation["score"],
            feedback=evaluation["feedback"],
        )
        grade = EvaluationEvent(
            kind="evaluation", turn=done["turn"], trial=done["trial"], score=done["score"]
        )
        events: list[ThoughtEvent | EvaluationEvent] = [*calls, grade]
        update: EvaluateUpdate = {"trials": [done], "trajectory": events}
        trials = [*trials_so_far(state), done]
        if done["score"] >= bar:
            return {**update, **_passed(done, trials)}
        if len(trials) >= trial_limit:
            return {**update, **_best_of(trials, _below(bar, trials))}
        spent = budget_stop({**state, "trajectory": [*state["trajectory"], *events]}, run.limits)
        if spent:  # a reflection and another attempt would overrun the budget
            return {**update, **_best_of(trials, spent)}
        return update

    return evaluate


def _grade(
    run: RunScope, evaluator: Evaluator | None, task: str, answer: str, state: ReflexionState
) -> Body[tuple[Evaluation, list[ThoughtEvent]]]:
    """The answer's grade, and the model calls it took: the judge's one, or none."""
    if evaluator is None:
        evaluation, call = yield from judge(run, task, answer, state)
        return evaluation, [call]
    result = yield _evaluation(evaluator, task, answer)
    return Evaluation(score=clamp_score(result["score"]), feedback=str(result["feedback"])), []


def _evaluation(evaluator: Evaluator, task: str, answer: str) -> Effect:
    """The user's evaluator as the face runs it: awaited when async, else called."""
    is_async = inspect.iscoroutinefunction(evaluator) or inspect.iscoroutinefunction(
        type(evaluator).__call__  # an object with an async __call__
    )
    if is_async:  # which the Evaluator's union cannot narrow to: its result is awaitable
        return Await(lambda: evaluator(task, answer))  # type: ignore[arg-type,return-value]
    return Blocking(evaluator, task, answer)


def _passed(done: Trial, trials: list[Trial]) -> EvaluateUpdate:
    """End with the passing attempt: answered, unless the attempt itself stopped short (a
    budget, a loop, a reply that was no answer), which its answer already says."""
    metadata = grade_metadata(done, trials)
    if done["outcome"]["status"] == "answered":
        final = AIMessage(done["answer"], response_metadata=metadata)
        return {"messages": [final], "outcome": {"status": "answered"}}
    reason = done["outcome"].get("reason", "stopped")
    outcome: Outcome = {"status": "incomplete", "reason": reason, "concluded": True}
    if "note" in done["outcome"]:  # what the attempt's own stop says, shown beside its answer
        outcome["note"] = done["outcome"]["note"]
    final = AIMessage(done["answer"], response_metadata=answered(outcome, **metadata))
    return {"messages": [final], "outcome": outcome}


def _below(threshold: float, trials: list[Trial]) -> Outcome:
    best = max(trial["score"] for trial in trials)
    reason = BELOW_THRESHOLD.format(threshold=threshold, trials=len(trials), score=best)
    return {"status": "incomplete", "reason": reason}


def _ungraded(answer: str, outcome: Outcome) -> EvaluateUpdate:
    """End with the latest attempt as it is: the budget leaves no call to grade it."""
    note = UNGRADED_NOTE.format(reason=outcome.get("reason", "stopped"))
    final = AIMessage(answer, response_metadata=answered({**outcome, "note": note}))
    return {"messages": [final], "outcome": outcome}


def _best_of(trials: list[Trial], outcome: Outcome) -> EvaluateUpdate:
    """End with the best-scored attempt (the earliest on a tie), marked incomplete."""
    best = max(trials, key=lambda t: t["score"])
    note = BEST_ATTEMPT_NOTE.format(
        trials=len(trials),
        score=best["score"],
        reason=outcome.get("reason", "stopped"),
        feedback=best["feedback"],
    )
    final = AIMessage(
        best["answer"],
        response_metadata=answered({**outcome, "note": note}, **grade_metadata(best, trials)),
    )
    return {"messages": [final], "outcome": outcome}


def grade_metadata(chosen: Trial, trials: list[Trial]) -> dict[str, Any]:
    """What Reflexion writes on its answer: the chosen trial, its score, and the trials made."""
    return {"score": chosen["score"], "trial": chosen["trial"], "trials": len(trials)}
