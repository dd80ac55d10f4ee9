"""``plan`` and ``replan``: the structured model calls that write and revise a plan.

Both ask for a typed reply (``with_structured_output``), so the graph routes on
fields rather than on parsed prose. A reply that cannot be read is not an
error the run dies of: a plan falls back to doing the request as one step, and
a revision falls back to an honest closing answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langchain_core.messages import AIMessage, SystemMessage
from pydantic import BaseModel, Field

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.plan_execute.progress import (
    conversation_prompt,
    progress_report,
    step_evidence,
    steps_done,
)
from reasoning_graphs.graphs.plan_execute.prompts import (
    PLANNER_SYSTEM,
    PLANNER_TOOLS,
    REPLAN_REQUEST,
    REPLANNER_SYSTEM,
    TOOL_LINE,
)
from reasoning_graphs.graphs.plan_execute.state import PlanExecuteState, PlanUpdate
from reasoning_graphs.metadata import answered
from reasoning_graphs.nodes.guards.budget import budget_stop
from reasoning_graphs.nodes.guards.honest import incomplete_note
from reasoning_graphs.nodes.model.call import ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.question import latest_request
from reasoning_graphs.state import Outcome

REPLAN_LIMIT = "reached the limit of {limit} replans"
NO_NEXT_STEP = "the replanner gave neither an answer nor further steps"
UNREADABLE_REPLAN = "the replanner's reply could not be read as an answer or a plan"
STEP_STOPPED = "the answer follows step {number}, which stopped short ({reason})"


class Plan(BaseModel):
    """An ordered plan for the user's request."""

    steps: list[str] = Field(
        description="The steps to carry out, in order; each one self-contained and concrete."
    )


class Replan(BaseModel):
    """Either the final answer, or the steps that are still needed."""

    response: str = Field(
        default="",
        description="The final answer for the user when the results so far suffice; "
        "empty otherwise.",
    )
    steps: list[str] = Field(
        default_factory=list,
        description="When there is no answer yet: the remaining steps, in order.",
    )


def make_plan(
    setup: AgentSetup, *, max_plan_steps: int
) -> Callable[[PlanExecuteState], Body[PlanUpdate]]:
    """Build the ``plan`` node: at most ``max_plan_steps`` steps, and a new plan per question."""

    def plan(state: PlanExecuteState) -> Body[PlanUpdate]:
        run = setup.for_run()
        prompt = [SystemMessage(_planner_system(run, state)), *state["messages"]]
        reply = yield from call_model(run, ModelRequest(prompt=prompt, schema=Plan), state)
        parsed, event = reply.parsed, reply.event
        steps = _clean(parsed.steps if isinstance(parsed, Plan) else [])
        return {
            # an unreadable or empty plan still gets the request done, as a single step
            "plan": steps[:max_plan_steps] or [latest_request(state["messages"])],
            "replans": 0,
            "outcome": None,
            "trajectory": [event],
        }

    return plan


def make_replan(
    setup: AgentSetup, *, max_replans: int, max_plan_steps: int
) -> Callable[[PlanExecuteState], Body[PlanUpdate]]:
    """Build the ``replan`` node: answer, or revise the plan at most ``max_replans`` times.

    Past the bound the node does not plan again; it sets an incomplete outcome
    and leaves the closing answer to ``finish`` — as it does, without a model
    call, when the question's budget is spent. An answer is the question's
    answer, incomplete when the step before it stopped short (:func:`_answer`).
    """

    def replan(state: PlanExecuteState) -> Body[PlanUpdate]:
        run = setup.for_run()
        spent = budget_stop(state, run.limits)
        if spent:  # a revision would be a call past the budget; finish concludes
            return {"outcome": spent}
        request = REPLAN_REQUEST.format(progress=progress_report(state))
        prompt = conversation_prompt(run.setup.instructed(REPLANNER_SYSTEM), state, request)
        reply = yield from call_model(run, ModelRequest(prompt=prompt, schema=Replan), state)
        parsed = reply.parsed
        update: PlanUpdate = {"trajectory": [reply.event]}
        if not isinstance(parsed, Replan):
            return {**update, "outcome": _incomplete(UNREADABLE_REPLAN)}
        if parsed.response.strip():
            return {**update, **_answer(state, parsed.response.strip())}
        steps = _clean(parsed.steps)
        if not steps:
            return {**update, "outcome": _incomplete(NO_NEXT_STEP)}
        replans, limit = state.get("replans", 0), run.option("max_replans", max_replans)
        if replans >= limit:
            return {**update, "outcome": _incomplete(REPLAN_LIMIT.format(limit=limit))}
        return {**update, "plan": steps[:max_plan_steps], "replans": replans + 1}

    return replan


def _answer(state: PlanExecuteState, text: str) -> PlanUpdate:
    """The replanner's answer, which ends the question.

    When the latest step stopped short (a loop, a round limit, a budget), its
    part of the plan was never done and the answer rests on it: the question ends
    incomplete, with the step's reason and what the steps returned, and with no
    closing call (the replanner has written the answer). A step that ran to its
    end and only closed on a reply that was no answer (``concluded``, such as one
    that quoted a rejection back) did its work: its result is what the replanner
    read, and its answer stands.
    """
    done = steps_done(state)
    stopped = done[-1]["outcome"] if done else None
    if stopped is None or stopped["status"] == "answered" or stopped.get("concluded"):
        return {"messages": [AIMessage(text)], "plan": [], "outcome": {"status": "answered"}}
    reason = STEP_STOPPED.format(number=len(done), reason=stopped.get("reason", "stopped"))
    note = incomplete_note(reason, step_evidence(state))
    outcome: Outcome = {"status": "incomplete", "reason": reason, "concluded": True, "note": note}
    answer = AIMessage(text, response_metadata=answered(outcome))
    return {"messages": [answer], "plan": [], "outcome": outcome}


def _planner_system(run: RunScope, state: PlanExecuteState) -> str:
    """The planner's instructions, naming the tools so that every step is doable."""
    specs = run.usable_specs(state)
    if not specs:
        return run.setup.instructed(PLANNER_SYSTEM)
    tools = "\n".join(TOOL_LINE.format(name=s.name, description=s.description) for s in specs)
    return run.setup.instructed(PLANNER_SYSTEM + PLANNER_TOOLS.format(tools=tools))


def _clean(steps: Sequence[str]) -> list[str]:
    return [step.strip() for step in steps if step.strip()]


def _incomplete(reason: str) -> Outcome:
    return {"status": "incomplete", "reason": reason}
