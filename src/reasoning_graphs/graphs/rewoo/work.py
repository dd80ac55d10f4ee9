"""``work``: hand the plan's next ready steps to the shared tool loop — without a model call.

A step is ready when every step it refers to has succeeded; its ``#E<n>``
references are then replaced by those results. The ready steps go out as one
synthetic ``AIMessage`` of tool calls (marked with
:func:`~reasoning_graphs.metadata.mark` as this pattern's, not a model's), so
``approve`` → ``act`` → ``observe`` treat them exactly like a model's turn: the
same approvals, concurrent read-only calls, ordered stateful calls and durable
per-call writes.

Stateful steps keep plan order across waves too: a stateful step is ready
only once every earlier stateful step of the plan has settled or goes out in
the same wave ahead of it (the loop runs a wave's stateful calls in order).
Otherwise a later ``note[second]`` with nothing to wait for would run before
an earlier ``note[#E1]`` still waiting for its input. Read-only steps are
never held back.

Results are never stored twice: a step's result is the ``ToolMessage`` that
answers its call id. A step that refers to a failed, rejected or skipped
step is skipped, not run with an error text in its arguments — a tool fed
"Error: …" where it expected data could do harm, and the solver is better
served by knowing the step could not run.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.messages.tool import ToolCall

from reasoning_graphs.graphs.rewoo.state import RewooState
from reasoning_graphs.graphs.rewoo.steps import EVIDENCE, RUNTIME, WORK_KIND, PlanStep
from reasoning_graphs.metadata import mark, mark_of
from reasoning_graphs.nodes.guards.budget import turn_call_limit
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.model.trajectory import action_event
from reasoning_graphs.nodes.steps.plan import result_value
from reasoning_graphs.question import (
    model_calls_used,
    question_answers,
    question_bookkeeping,
    question_number,
    this_question,
)
from reasoning_graphs.state import ActionEvent, AgentUpdate, Node
from reasoning_graphs.tools.execute import cut_message
from reasoning_graphs.tools.output import content_text
from reasoning_graphs.tools.registry import ToolRegistry

SKIPPED = "Not run: it needs the result of {refs}, which did not succeed."
SKIPPED_ID = "{var}-skipped"


@dataclass(frozen=True)
class StepResult:
    """What became of one plan step.

    Attributes:
        status: ``success``, ``error`` (failed, rejected or blocked) or ``skipped``.
        text: The observation as the model sees it.
        value: What replaces the step's variable in later steps (the full text
            when the observation was cut).
    """

    status: Literal["success", "error", "skipped"]
    text: str
    value: str


def issued_calls(messages: Sequence[AnyMessage]) -> dict[str, ToolCall]:
    """The calls issued for plan steps this turn, by variable (as run: substituted, edited)."""
    issued: dict[str, ToolCall] = {}
    for message in question_bookkeeping(messages, RUNTIME, WORK_KIND):
        if isinstance(message, AIMessage):
            variables = mark_of(message).get("vars", {})
            for call in message.tool_calls:
                if call["id"] in variables:
                    issued[variables[call["id"]]] = call
    return issued


def step_results(state: RewooState, registry: ToolRegistry | None = None) -> dict[str, StepResult]:
    """The settled steps of the current plan, by variable, derived from the messages;
    with ``registry``, each result's text as the model reads it (long ones cut)."""
    issued = issued_calls(state["messages"])
    answers = question_answers(state["messages"])
    full_texts = state.get("observations") or {}
    results: dict[str, StepResult] = {}
    for step in state.get("plan") or []:
        call = issued.get(step["var"])
        answer = answers.get(call["id"] or "") if call else None  # work always gives an id
        if call is not None and answer is not None:
            value = result_value(state["messages"], full_texts, answer)
            shown = answer if registry is None else cut_message(answer, registry, call["name"])
            results[step["var"]] = _result(shown, value)
            continue
        failed = [
            f"#{ref}"
            for ref in EVIDENCE.references(step["args"])
            if ref in results and results[ref].status != "success"
        ]
        if call is None and failed:
            text = SKIPPED.format(refs=", ".join(failed))
            results[step["var"]] = StepResult(status="skipped", text=text, value=text)
    return results


def make_work(setup: AgentSetup) -> Node[RewooState]:
    """Build the ``work`` node for ``setup``."""

    def work(state: RewooState) -> AgentUpdate:
        run = setup.for_run()
        plan: list[PlanStep] = state.get("plan") or []
        results = step_results(state)
        issued = issued_calls(state["messages"])
        values = {var: r.value for var, r in results.items() if r.status == "success"}
        ready = _ready_steps(plan, issued, results, values, run.registry)
        update: AgentUpdate = {"trajectory": _skip_events(state, plan, results)}
        if ready:
            update["messages"] = [_wave(ready[: turn_call_limit(state, run.limits)], values)]
        return update

    return work


def _ready_steps(
    plan: Sequence[PlanStep],
    issued: Mapping[str, ToolCall],
    results: Mapping[str, StepResult],
    values: Mapping[str, str],
    registry: ToolRegistry,
) -> list[PlanStep]:
    """Steps whose inputs are all known, in plan order; stateful ones not past an earlier one."""
    ready: list[PlanStep] = []
    stateful_waiting = False
    for step in plan:
        if step["var"] in issued or step["var"] in results:
            continue
        inputs_known = all(ref in values for ref in EVIDENCE.references(step["args"]))
        if registry.is_read_only(step["tool"]):
            if inputs_known:
                ready.append(step)
        elif inputs_known and not stateful_waiting:
            ready.append(step)
        else:
            stateful_waiting = True
    return ready


def _wave(steps: Sequence[PlanStep], values: Mapping[str, str]) -> AIMessage:
    """The synthetic turn that asks the tool loop to run ``steps``."""
    calls = [
        ToolCall(
            name=step["tool"],
            args=EVIDENCE.substitute(step["args"], values),
            id=f"{step['var']}-{uuid.uuid4().hex[:8]}",
            type="tool_call",
        )
        for step in steps
    ]
    variables = {call["id"]: step["var"] for call, step in zip(calls, steps, strict=True)}
    return AIMessage(
        content="",
        tool_calls=calls,
        response_metadata=mark(RUNTIME, WORK_KIND, vars=variables),
    )


def _result(answer: ToolMessage, value: str) -> StepResult:
    text = content_text(answer.content)
    status: Literal["success", "error"] = "success" if answer.status == "success" else "error"
    return StepResult(status=status, text=text, value=value)


def _skip_events(
    state: RewooState, plan: Sequence[PlanStep], results: Mapping[str, StepResult]
) -> list[ActionEvent]:
    """Trajectory records for steps newly found to be skipped (each recorded once per turn)."""
    turn = question_number(state["messages"])
    recorded = {
        event.get("id")
        for event in this_question(state.get("trajectory"), state["messages"])
        if event.get("kind") == "action"
    }
    return [
        action_event(
            turn=turn,
            step=model_calls_used(state),
            call_id=SKIPPED_ID.format(var=step["var"]),
            tool=step["tool"],
            args=step["args"],
            observation=results[step["var"]].text,
            status="error",
            decision="skipped",
        )
        for step in plan
        if step["var"] in results
        and results[step["var"]].status == "skipped"
        and SKIPPED_ID.format(var=step["var"]) not in recorded
    ]
