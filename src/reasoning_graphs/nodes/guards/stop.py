"""A model call stopped part-way, and the node that made it.

The seam (:func:`~reasoning_graphs.nodes.model.call.call_model`) raises
:class:`QuestionStopped` when a call is stopped by a budget while it streams,
by the time budget, the per-call or the idle timeout, or when a call that
failed for a reason that may pass still fails after its retries. A node made
with :func:`model_node` turns that into the question's incomplete outcome
(marked ``call_stopped``) plus the stopped call's event, so its cost counts;
the pattern's router then sends the question to its honest stop, as it does
when a budget is spent before a call (:func:`call_stopped`).

Whether the stop asks the model once more for a closing answer is the
budgets' rule (:func:`~reasoning_graphs.nodes.guards.budget.may_conclude`): yes after
a budget, no after a halt (the event's ``halt`` says why).

A :func:`model_node` also checks the answer its step gives: a reply that is no
answer (empty, or our own words given back) ends the question incomplete
(:mod:`~reasoning_graphs.nodes.guards.honest`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.runnables import Runnable

from reasoning_graphs.effects import Body, effect_node
from reasoning_graphs.nodes.guards.honest import answers_checked
from reasoning_graphs.state import AgentUpdate, Outcome, ThoughtEvent


class QuestionStopped(Exception):
    """The question must stop: a model call was stopped or kept failing.

    Attributes:
        outcome: The incomplete outcome: why the question stops.
        events: The model calls this costs (the stopped one last), for the trajectory.
        records: Other records the trajectory keeps of the stop (a batch cut short).
    """

    def __init__(
        self,
        outcome: Outcome,
        events: Sequence[ThoughtEvent],
        records: Sequence[Mapping[str, Any]] = (),
    ):
        super().__init__(outcome.get("reason", "stopped"))
        self.outcome = outcome
        self.events = list(events)
        self.records = list(records)

    def update(self) -> AgentUpdate:
        """What the node that made the call writes instead of its own update."""
        outcome: Outcome = {**self.outcome, "call_stopped": True}
        return {"outcome": outcome, "trajectory": [*self.events, *self.records]}


def stoppable(
    make_body: Callable[[Any], Body[Mapping[str, Any]]],
) -> Callable[[Any], Body[Mapping[str, Any]]]:
    """``make_body`` whose bodies end in :meth:`QuestionStopped.update` when a call stops."""

    def body(state: Any) -> Body[Mapping[str, Any]]:
        try:
            return (yield from make_body(state))
        except QuestionStopped as stop:
            return stop.update()

    return body


def model_step(
    make_body: Callable[[Any], Body[Mapping[str, Any]]],
) -> Callable[[Any], Body[Mapping[str, Any]]]:
    """``make_body`` as a step that calls the model: a stopped call ends the question
    incomplete, and so does an answer that is no answer."""
    return stoppable(answers_checked(make_body))


def model_node(name: str, make_body: Callable[[Any], Body[Mapping[str, Any]]]) -> Runnable:
    """An :func:`~reasoning_graphs.effects.effect_node` for a node that calls the model
    (:func:`model_step`)."""
    return effect_node(name, model_step(make_body))


def call_stopped(state: Mapping[str, Any]) -> bool:
    """Whether the node that just ran had its model call stopped (see :class:`QuestionStopped`)."""
    outcome = state.get("outcome")
    return bool(outcome and outcome.get("call_stopped"))


def not_stopped(update: Mapping[str, Any]) -> bool:
    """Whether a step's update is its own (its model call was not stopped): for a step that
    ends the question unless its call is stopped."""
    return not call_stopped(update)
