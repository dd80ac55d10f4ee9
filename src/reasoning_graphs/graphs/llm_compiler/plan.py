"""``plan``: one model call that writes a round's task graph, checked before anything runs.

The plan comes back through ``with_structured_output`` when the model
supports it, and in the paper's ``1. tool(arg=…)`` text form otherwise (or
when a structured reply cannot be read). Either way it is checked — unknown
tools, missing or duplicate ids, circles — before any tool runs; a second
call is told exactly what was wrong, and a plan still invalid ends the
question honestly in ``finish`` — as does a question whose budget is spent,
without another plan call. After a round the joiner asked to extend,
the planner sees that round's results and the reason.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.llm_compiler.dag import (
    JOIN_KIND,
    PLAN_KIND,
    RUNTIME,
    SCHEDULE_KIND,
    TaskPlan,
    parse_plan_text,
    plan_problems,
    render_plan,
    rounds_report,
    rounds_run,
    tasks_from_schema,
    topological_order,
)
from reasoning_graphs.graphs.llm_compiler.prompts import (
    INVALID_PLAN_REQUEST,
    PLANNER_INSTRUCTIONS,
    REPLAN_REQUEST,
    TEXT_FORMAT,
)
from reasoning_graphs.graphs.llm_compiler.state import LlmCompilerState, PlanUpdate
from reasoning_graphs.metadata import mark, mark_of, written_by
from reasoning_graphs.nodes.guards.budget import turn_call_limit
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.steps.plan import (
    PlanForm,
    draft_plan,
    no_valid_plan,
    plan_node,
)
from reasoning_graphs.question import question_messages
from reasoning_graphs.state import Outcome
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import ToolSpec

MAX_PLAN_RETRIES = 1
"""Further plan calls per round after an invalid plan; then the question ends in ``finish``."""

CALL_ID = "t{id}-{suffix}"
"""A task's call id: its number in the plan and a suffix that makes it unique in the thread."""

PLAN_FORM = PlanForm(
    instructions=PLANNER_INSTRUCTIONS,
    text_format=TEXT_FORMAT,
    schema=TaskPlan,
    from_schema=tasks_from_schema,
    parse_text=parse_plan_text,
)


def replan_request(state: LlmCompilerState, registry: ToolRegistry) -> list[BaseMessage]:
    """What the planner is told after the conversation: the results of a round the joiner
    wanted extended and why, or the plan of this round that could not run and what was wrong."""
    latest = next(
        (m for m in reversed(question_messages(state["messages"])) if written_by(m, RUNTIME)), None
    )
    if latest is not None and written_by(latest, RUNTIME, JOIN_KIND):
        results = rounds_report(state["messages"], registry)
        reason = mark_of(latest).get("reason", "")
        return [HumanMessage(REPLAN_REQUEST.format(results=results, reason=reason))]
    if latest is not None and written_by(latest, RUNTIME, PLAN_KIND):
        previous = render_plan(state.get("plan") or [])
        problem = state.get("plan_problem")
        return [HumanMessage(INVALID_PLAN_REQUEST.format(plan=previous, problem=problem))]
    return []


def make_plan(setup: AgentSetup) -> Callable[[LlmCompilerState], Body[Mapping[str, Any]]]:
    """Build the ``plan`` node for ``setup``."""

    def write_plan(
        run: RunScope, state: LlmCompilerState, specs: list[ToolSpec]
    ) -> Body[PlanUpdate]:
        tool_names, limit = [spec.name for spec in specs], turn_call_limit(state, run.limits)
        round_number = 1 + rounds_run(state["messages"])
        attempt = _attempts_this_round(question_messages(state["messages"]))
        draft = yield from draft_plan(
            run,
            PLAN_FORM,
            state,
            specs,
            follow_up=replan_request(state, run.registry),
            check=lambda tasks: plan_problems(tasks, tool_names, limit),
        )
        tasks = draft.steps if draft.problem else topological_order(draft.steps)
        for task in tasks:
            task["call_id"] = CALL_ID.format(id=task["id"], suffix=uuid.uuid4().hex[:8])
        message, event = draft.message(
            render_plan(tasks), mark(RUNTIME, PLAN_KIND, round=round_number)
        )
        outcome: Outcome | None = None
        if draft.problem and attempt >= MAX_PLAN_RETRIES:
            outcome = no_valid_plan(attempt + 1, draft.problem)
        return {
            "messages": [message],
            "trajectory": [event],
            "plan": tasks,
            "plan_problem": draft.problem,
            "outcome": outcome,
        }

    return plan_node(setup, write_plan)


def _attempts_this_round(turn: Sequence[AnyMessage]) -> int:
    """Plans already made since the question or the latest schedule (invalid ones)."""
    attempts = 0
    for message in turn:
        if written_by(message, RUNTIME, SCHEDULE_KIND):
            attempts = 0
        elif written_by(message, RUNTIME, PLAN_KIND):
            attempts += 1
    return attempts
