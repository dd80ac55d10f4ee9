"""``think`` in typed steps, for the ReAct graphs built or run with ``step_format="structured"``.

:func:`with_step_format` wraps a pattern's own ``think`` (native tool calls in
``react``, the Thought/Action text in ``react_text``): a run whose ``step_format`` is
``"structured"`` thinks in typed steps (:mod:`~reasoning_graphs.nodes.steps.typed_step`)
instead, any other the pattern's own way. The step's ``confidence`` and
``needs_more_info`` go on its thought event, and the graph's step rules
(:mod:`~reasoning_graphs.nodes.steps.step_rules`) decide what an unsure step leads to.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from reasoning_graphs.context import StepFormat
from reasoning_graphs.effects import Body
from reasoning_graphs.metadata import answered
from reasoning_graphs.nodes.guards.advice import advice_for, advised, with_note
from reasoning_graphs.nodes.guards.budget import budget_stop
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.model.call import NO_TYPED_CALL, ModelReply, ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.model.view import model_view
from reasoning_graphs.nodes.steps.answer_turn import answer_turn
from reasoning_graphs.nodes.steps.prompts import REACT_SYSTEM
from reasoning_graphs.nodes.steps.reflect import with_reflection
from reasoning_graphs.nodes.steps.step_rules import RuleHit, StepRule, rule_hit
from reasoning_graphs.nodes.steps.typed_step import (
    FINAL_ANSWER,
    TYPED_STEP,
    TypedStep,
    step_instructions,
    step_message,
    step_schema,
    unfit_step_message,
)
from reasoning_graphs.state import AgentState, AgentUpdate, Outcome, ThoughtEvent

StepBody = Callable[[AgentState], Body[AgentUpdate]]

RETRY_NOTE = (
    "Your last step was not used: {reason}. Look again at the question and the "
    "observations, then give the step you are sure of; if only the user can tell you what "
    "is missing, set needs_more_info and write your question."
)
CLARIFY = "Before I go on, I need to know more. {thought} Could you tell me more?"
ASKED = "the model asked the user a question: {reason}"
STOPPED = "stopped by a step rule: {reason}"
own_texts(RETRY_NOTE, CLARIFY)
ANSWERED: Outcome = {"status": "answered"}


@dataclass(frozen=True)
class StepFormatting:
    """How a ReAct graph writes its steps: the ``step_format`` it was built with (a run may
    choose another) and the rules for unsure typed steps (build only)."""

    format: StepFormat = "free"
    rules: tuple[StepRule, ...] = ()

    def structured(self, run: RunScope) -> bool:
        return run.option("step_format", self.format) == "structured"


def with_step_format(setup: AgentSetup, formatting: StepFormatting, free: StepBody) -> StepBody:
    """The ``think`` node: typed steps when the run's ``step_format`` is ``"structured"``,
    else the pattern's own ``free`` think."""
    system_prompt = setup.system_prompt or REACT_SYSTEM

    def think(state: AgentState) -> Body[AgentUpdate]:
        run = setup.for_run()
        if not formatting.structured(run):
            return (yield from free(state))
        return (yield from think_typed(run, state, system_prompt, formatting.rules))

    return think


def think_typed(
    run: RunScope, state: AgentState, system_prompt: str, rules: Sequence[StepRule]
) -> Body[AgentUpdate]:
    """One typed step: asked, checked against the rules, and turned into the turn's message.

    In an answer turn (:mod:`~reasoning_graphs.nodes.steps.answer_turn`) the schema offers
    ``final_answer`` alone.
    """
    spent = budget_stop(state, run.limits)
    if spent:  # a question whose budget was spent before this step: straight to finish
        return {"outcome": spent, "to_run": []}
    specs = run.usable_specs(state)
    turn = answer_turn(state, run.limits) if specs else None
    if turn is not None:
        specs = []
    messages = state["messages"]
    advice = [*advice_for(messages, run.limits), *([turn.advice] if turn else [])]
    system = SystemMessage(f"{system_prompt}\n\n{step_instructions(specs)}")
    shown = with_reflection([system, *model_view(messages, run.registry)], state)
    prompt = advised(shown, advice)
    request = ModelRequest(prompt=prompt, schema=step_schema(specs))
    events: list[ThoughtEvent] = []
    retried = 0
    while True:
        seen = {**state, "trajectory": [*state.get("trajectory", []), *events]}
        reply = yield from call_model(run, request, seen)
        step = reply.parsed
        if not isinstance(step, TypedStep):
            events.append(reply.event)
            error = reply.parsing_error or NO_TYPED_CALL
            return _turn(unfit_step_message(reply.message, error), events)
        events.append(_step_event(reply, step))
        hit = rule_hit(rules, confidence=step.confidence, needs_more_info=step.needs_more_info)
        if hit is None or (hit.then == "retry" and retried >= hit.retries):
            outcome = ANSWERED if step.action == FINAL_ANSWER else None
            return _turn(step_message(step, reply.message), events, outcome)
        if hit.then == "retry":
            retried += 1
            request = ModelRequest(prompt=_again(request.prompt, step, hit), schema=request.schema)
        elif hit.then == "ask":
            return _asked(step, reply, hit, events)
        else:  # stop: the loop's finish concludes honestly, as after a spent budget
            stopped: Outcome = {"status": "incomplete", "reason": STOPPED.format(reason=hit.reason)}
            return {"trajectory": events, "outcome": stopped, "to_run": []}


def _step_event(reply: ModelReply, step: TypedStep) -> ThoughtEvent:
    """The call's event with what the step says: its thought, the tool it calls (a round,
    as the budgets count rounds), its confidence and whether it needs more information."""
    event: ThoughtEvent = {
        **reply.event,
        "text": step.answer if step.action == FINAL_ANSWER else step.thought,
        "tool_calls": [] if step.action == FINAL_ANSWER else [step.action],
        "confidence": step.confidence,
        "needs_more_info": step.needs_more_info,
    }
    return event


def _again(prompt: Sequence[BaseMessage], step: TypedStep, hit: RuleHit) -> list[BaseMessage]:
    """The prompt once more, with the step that was not used and why."""
    said = AIMessage(json.dumps(step.model_dump(), ensure_ascii=False))
    return with_note([*prompt, said], RETRY_NOTE.format(reason=hit.reason))


def _asked(
    step: TypedStep, reply: ModelReply, hit: RuleHit, events: list[ThoughtEvent]
) -> AgentUpdate:
    """The turn ended with a question to the user: the model's own, or one from its thought."""
    question = step.question.strip() or CLARIFY.format(thought=step.thought.strip())
    reason = ASKED.format(reason=hit.reason)
    outcome: Outcome = {"status": "incomplete", "reason": reason, "concluded": True, "note": reason}
    metadata: Mapping[str, Any] = {TYPED_STEP: step.model_dump(), **answered(outcome)}
    message = AIMessage(
        question,
        id=reply.message.id,
        response_metadata=dict(metadata),
        usage_metadata=reply.message.usage_metadata,
    )
    return _turn(message, events, outcome)


def _turn(
    message: AIMessage, events: list[ThoughtEvent], outcome: Outcome | None = None
) -> AgentUpdate:
    return {"messages": [message], "trajectory": events, "outcome": outcome, "to_run": []}
