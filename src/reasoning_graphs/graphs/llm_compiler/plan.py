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
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.llm_compiler.dag import (
    JOIN_KIND,
    PLAN_KIND,
    RUNTIME,
    SCHEDULE_KIND,
    TaskPlan,
    is_compiler_message,
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
from reasoning_graphs.nodes.budget import budget_stop
from reasoning_graphs.nodes.model_call import supports_schema
from reasoning_graphs.nodes.planning import ask_for_plan, planner_opening
from reasoning_graphs.nodes.setup import AgentSetup
from reasoning_graphs.nodes.turn import turn_messages
from reasoning_graphs.state import Outcome
from reasoning_graphs.tools.spec import ToolSpec

MAX_PLAN_RETRIES = 1
"""Further plan calls per round after an invalid plan; then the question ends in ``finish``."""

EMPTY_PLAN = "(no tasks)"
CANNOT_RUN_NOTE = "\n[This plan cannot run: {problem}]"
NO_VALID_PLAN = "no usable plan after {attempts} attempts ({problem})"
CALL_ID = "t{id}-{suffix}"
"""The messages planner and joiner leave out of the conversation: this pattern's own, and
ReWOO's from earlier questions of a thread that switched pattern (``--thread`` with
``--pattern``)."""


def planner_prompt(
    setup: AgentSetup, state: dict[str, Any], specs: Sequence[ToolSpec], *, text_format: bool
) -> list[BaseMessage]:
    """Instructions with the tools, the conversation, then what earlier rounds and plans taught."""
    prompt = planner_opening(
        setup,
        PLANNER_INSTRUCTIONS,
        specs,
        state["messages"],
        text_format=TEXT_FORMAT if text_format else None,
    )
    latest = next(
        (m for m in reversed(turn_messages(state["messages"])) if is_compiler_message(m)), None
    )
    if latest is not None and is_compiler_message(latest, JOIN_KIND):
        results = rounds_report(state["messages"])
        reason = latest.response_metadata.get("reason", "")
        prompt.append(HumanMessage(REPLAN_REQUEST.format(results=results, reason=reason)))
    elif latest is not None and is_compiler_message(latest, PLAN_KIND):
        previous = render_plan(state.get("plan") or []) or EMPTY_PLAN
        problem = state.get("plan_problem")
        prompt.append(HumanMessage(INVALID_PLAN_REQUEST.format(plan=previous, problem=problem)))
    return prompt


def make_plan(setup: AgentSetup) -> Callable[[dict[str, Any]], Body[dict[str, Any]]]:
    """Build the ``plan`` node for ``setup``."""

    def plan(state: dict[str, Any]) -> Body[dict[str, Any]]:
        run = setup.for_run()
        spent = budget_stop(state, run.limits)
        if spent:  # another plan would be a call past the budget; finish concludes
            return {"outcome": spent}
        specs = run.usable_specs(state)
        turn = turn_messages(state["messages"])
        round_number = 1 + rounds_run(turn)
        attempt = _attempts_this_round(turn)
        typed = supports_schema(run.model, TaskPlan)
        prompt = planner_prompt(setup, state, specs, text_format=not typed)
        reply, tasks, problems = yield from ask_for_plan(
            run.model,
            TaskPlan if typed else None,
            prompt,
            state,
            specs,
            from_schema=tasks_from_schema,
            parse_text=parse_plan_text,
        )
        limit = run.limits.max_tool_calls_per_turn
        problems.extend(plan_problems(tasks, [spec.name for spec in specs], limit))
        problem = " ".join(problems) or None
        if problem is None:
            tasks = topological_order(tasks)
        for task in tasks:
            task["call_id"] = CALL_ID.format(id=task["id"], suffix=uuid.uuid4().hex[:8])
        content = render_plan(tasks) or EMPTY_PLAN
        if problem:
            content += CANNOT_RUN_NOTE.format(problem=problem)
        message = AIMessage(
            content=content,
            usage_metadata=reply.message.usage_metadata,
            response_metadata={"runtime": RUNTIME, "kind": PLAN_KIND, "round": round_number},
        )
        outcome: Outcome | None = None
        if problem and attempt >= MAX_PLAN_RETRIES:
            reason = NO_VALID_PLAN.format(attempts=attempt + 1, problem=problem.rstrip("."))
            outcome = {"status": "incomplete", "reason": reason}
        event = {**reply.event, "text": message.text}
        return {
            "messages": [message],
            "trajectory": [event],
            "plan": tasks,
            "plan_problem": problem,
            "outcome": outcome,
        }

    return plan


def _attempts_this_round(turn: Sequence[AnyMessage]) -> int:
    """Plans already made since the question or the latest schedule (invalid ones)."""
    attempts = 0
    for message in turn:
        if is_compiler_message(message, SCHEDULE_KIND):
            attempts = 0
        elif is_compiler_message(message, PLAN_KIND):
            attempts += 1
    return attempts
