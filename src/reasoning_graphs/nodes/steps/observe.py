"""``observe``: close a turn's tool round and check the budgets and progress before thinking again.

The loop passes through ``observe`` only when a round leaves something to
record (:func:`round_update`); a round that ends in nothing but its
observations goes straight back to the model, which checks the budgets again
before its call.

A progress guard reads the rounds here (:mod:`~reasoning_graphs.nodes.guards.loops`):
after ``stale_round_limit`` rounds in a row with no new information, the loop ends and
``finish`` asks the model to answer. ``repeat_round_limit`` rounds in a row made only of
pure tools' calls answered from earlier results make the model's next call an answer
turn instead (:mod:`~reasoning_graphs.nodes.steps.answer_turn`). The other
guards' advice (empty results in a row, a repeat that returned the same result, a pure
call answered from an earlier one) goes to
the model's next prompt, never into an observation (:mod:`~reasoning_graphs.nodes.guards.advice`).

A round whose every call went to a tool that answers for the model
(``return_direct=True``, or a ``Command`` with ``goto=END``) and succeeded
ends the turn with those results as the answer, as ``create_agent`` does; the
answer is an ``AIMessage`` so that callers find it where every pattern puts
its answer. A failed call leaves the model to decide what to do instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import AIMessage

from reasoning_graphs.context import Limits
from reasoning_graphs.effects import Body
from reasoning_graphs.metadata import RETURN_DIRECT, answered, is_direct_result
from reasoning_graphs.nodes.grounding.report import gives_answer, with_report
from reasoning_graphs.nodes.guards.budget import budget_stop
from reasoning_graphs.nodes.guards.loops import stale_stop
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.steps.verify import with_direct_answer
from reasoning_graphs.question import last_ai_message, question_answers, runtime_id
from reasoning_graphs.state import AgentState, AgentUpdate, Outcome
from reasoning_graphs.tools.output import content_text

ANSWERED: Outcome = {"status": "answered"}


def direct_answer(state: AgentState) -> AIMessage | None:
    """The answer made of the round's results, when every call of the round asked for it."""
    reply = last_ai_message(state["messages"])
    if not reply.tool_calls or reply.invalid_tool_calls:
        return None
    answers = question_answers(state["messages"])
    results = [answers.get(runtime_id(call)) for call in reply.tool_calls]
    if not all(m is not None and is_direct_result(m) for m in results):
        return None
    found = [m for m in results if m is not None]
    names = [call["name"] for call in reply.tool_calls]
    content = (
        found[0].content if len(found) == 1 else "\n\n".join(content_text(m.content) for m in found)
    )
    metadata = {**answered(ANSWERED), RETURN_DIRECT: names}
    return AIMessage(content=content, response_metadata=metadata)


def round_update(state: AgentState, limits: Limits) -> AgentUpdate | None:
    """What ``observe`` records after a round: an outcome (answered by a tool, a budget
    spent, rounds gone stale, or one set while settling); ``None`` when there is nothing
    to record, and the loop goes straight back to the model."""
    if state.get("outcome"):
        return {"to_run": [], "outcome": state["outcome"]}
    answer = direct_answer(state)
    if answer is not None:
        return {"to_run": [], "outcome": ANSWERED, "messages": [answer]}
    outcome = budget_stop(state, limits) or stale_stop(state, limits.stale_round_limit)
    if outcome is None:
        return None
    return {"to_run": [], "outcome": outcome}


def make_observe(
    setup: AgentSetup, *, report: bool = False
) -> Callable[[AgentState], Body[Mapping[str, Any]]]:
    """Build the ``observe`` step for ``setup`` (an effect node's body); with ``report`` a
    tool's direct answer, which ends the question, comes with its grounding report (and
    with a response format its typed answer, a model call)."""

    def observe(state: AgentState) -> Body[Mapping[str, Any]]:
        update = round_update(state, setup.for_run().limits)
        if update is None:
            return {"to_run": [], "outcome": None}
        if not (report and gives_answer(update)):
            return update
        return (yield from with_direct_answer(setup, state, with_report(state, update)))

    return observe
