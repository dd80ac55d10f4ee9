"""Where a plan stands: the steps done in this turn and how the model is told about them.

The planner, the step executor, the replanner and the closing answer all read
the same facts — the request, the finished steps with their results, the steps
still planned — so they are derived here, once, from the state.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from reasoning_graphs.graphs.plan_execute.prompts import (
    DONE_STEP,
    DONE_STEP_INCOMPLETE,
    NOTHING_DONE,
    PROGRESS,
    REMAINING,
)
from reasoning_graphs.graphs.plan_execute.state import PastStep, PlanExecuteState
from reasoning_graphs.nodes.guards.untrusted import as_data
from reasoning_graphs.question import describe_call, latest_request, this_question

EVIDENCE_STEPS = 3


def steps_done(state: PlanExecuteState) -> list[PastStep]:
    """The steps executed for the current question, in order."""
    return this_question(state.get("past_steps"), state["messages"])


def step_evidence(state: PlanExecuteState) -> list[tuple[str, str]]:
    """The latest finished steps of this question, each with its result (an incomplete
    answer's evidence)."""
    done = steps_done(state)[-EVIDENCE_STEPS:]
    return [(describe_call("step", {"task": item["step"]}), item["result"]) for item in done]


def describe_steps_done(steps: Sequence[PastStep]) -> str:
    """Finished steps as a numbered list with their results, for a prompt.

    A result is the step's answer, written from tool output, so it is shown as
    data (:mod:`reasoning_graphs.nodes.guards.untrusted`), never as the person's words.
    """
    if not steps:
        return NOTHING_DONE
    lines = []
    for number, done in enumerate(steps, 1):
        outcome = done["outcome"]
        result = as_data(done["result"], source=f"step {number}")  # it carries tool output
        if outcome["status"] == "answered":
            line = DONE_STEP.format(number=number, step=done["step"], result=result)
        else:
            line = DONE_STEP_INCOMPLETE.format(
                number=number,
                step=done["step"],
                result=result,
                reason=outcome.get("reason", "stopped"),
            )
        lines.append(line)
    return "\n".join(lines)


def progress_report(state: PlanExecuteState) -> str:
    """The request, the steps done with their results, and the steps still planned."""
    remaining = state.get("plan") or []
    planned = "\n".join(f"- {step}" for step in remaining)
    return PROGRESS.format(
        task=latest_request(state["messages"]),
        done=describe_steps_done(steps_done(state)),
        remaining=REMAINING.format(steps=planned) if remaining else "",
    )


def conversation_prompt(system: str, state: PlanExecuteState, request: str) -> list[BaseMessage]:
    """``system``, the whole conversation, then ``request`` as the last human message.

    The whole conversation comes first so that a follow-up question is read in
    context; ``request`` carries the progress report and what to decide.
    """
    return [SystemMessage(system), *state["messages"], HumanMessage(request)]
