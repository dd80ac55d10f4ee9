"""``plan``: one model call that writes the whole ReWOO plan, checked before anything runs.

The plan comes back through ``with_structured_output`` when the model
supports it, and as classic ``Plan: … #E1 = tool[input]`` text otherwise (or
when a structured reply cannot be read). Either way it is checked — unknown
tools, undefined, later or circular references, repeated variables — before
any tool runs; a second call is told exactly what was wrong. A question
whose budget is spent gets no further plan call: ``finish`` concludes it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.rewoo.prompts import (
    PLANNER_INSTRUCTIONS,
    REPLAN_REQUEST,
    TEXT_FORMAT,
)
from reasoning_graphs.graphs.rewoo.state import PlanUpdate, RewooState
from reasoning_graphs.graphs.rewoo.steps import (
    PLAN_KIND,
    RUNTIME,
    PlanSchema,
    parse_plan_text,
    plan_problems,
    render_plan,
    steps_from_schema,
)
from reasoning_graphs.metadata import mark
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.steps.plan import PlanForm, draft_plan, plan_node
from reasoning_graphs.question import question_bookkeeping
from reasoning_graphs.tools.spec import ToolSpec

MAX_REPLANS = 1
"""Further plan calls after an invalid plan; then the solver explains instead."""

PLAN_FORM = PlanForm(
    instructions=PLANNER_INSTRUCTIONS,
    text_format=TEXT_FORMAT,
    schema=PlanSchema,
    from_schema=steps_from_schema,
    parse_text=parse_plan_text,
)


def retry_request(state: RewooState, attempt: int) -> list[BaseMessage]:
    """On a second attempt, what the planner is told after the conversation: what was wrong."""
    if not attempt:
        return []
    previous = render_plan(state.get("plan") or [])
    return [HumanMessage(REPLAN_REQUEST.format(plan=previous, problem=state.get("plan_problem")))]


def make_plan(setup: AgentSetup) -> Callable[[RewooState], Body[Mapping[str, Any]]]:
    """Build the ``plan`` node for ``setup``."""

    def write_plan(run: RunScope, state: RewooState, specs: list[ToolSpec]) -> Body[PlanUpdate]:
        tool_names = [spec.name for spec in specs]
        attempt = len(question_bookkeeping(state["messages"], RUNTIME, PLAN_KIND))
        draft = yield from draft_plan(
            run,
            PLAN_FORM,
            state,
            specs,
            follow_up=retry_request(state, attempt),
            check=lambda steps: plan_problems(steps, tool_names),
        )
        message, event = draft.message(render_plan(draft.steps), mark(RUNTIME, PLAN_KIND))
        return {
            "messages": [message],
            "trajectory": [event],
            "plan": draft.steps,
            "plan_problem": draft.problem,
            "replans": attempt,
            "outcome": None,
            "to_run": [],
        }

    return plan_node(setup, write_plan)
