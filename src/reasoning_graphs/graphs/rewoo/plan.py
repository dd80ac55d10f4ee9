"""``plan``: one model call that writes the whole ReWOO plan, checked before anything runs.

The plan comes back through ``with_structured_output`` when the model
supports it, and as classic ``Plan: … #E1 = tool[input]`` text otherwise (or
when a structured reply cannot be read). Either way it is checked — unknown
tools, undefined, later or circular references, repeated variables — before
any tool runs; a second call is told exactly what was wrong. A question
whose budget is spent gets no further plan call: ``finish`` concludes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.rewoo.prompts import (
    PLANNER_INSTRUCTIONS,
    REPLAN_REQUEST,
    TEXT_FORMAT,
)
from reasoning_graphs.graphs.rewoo.steps import (
    PLAN_KIND,
    RUNTIME,
    PlanSchema,
    is_rewoo_message,
    parse_plan_text,
    plan_problems,
    render_plan,
    steps_from_schema,
)
from reasoning_graphs.nodes.budget import budget_stop
from reasoning_graphs.nodes.model_call import supports_schema
from reasoning_graphs.nodes.planning import ask_for_plan, planner_opening
from reasoning_graphs.nodes.setup import AgentSetup
from reasoning_graphs.nodes.turn import turn_messages
from reasoning_graphs.tools.spec import ToolSpec

MAX_REPLANS = 1
"""Further plan calls after an invalid plan; then the solver explains instead."""

EMPTY_PLAN = "Plan: no tool is needed."
CANNOT_RUN_NOTE = "\n[This plan cannot run: {problem}]"
"""The messages planner and solver leave out of the conversation: this pattern's own."""


def planner_prompt(
    setup: AgentSetup,
    state: dict[str, Any],
    specs: Sequence[ToolSpec],
    *,
    attempt: int,
    text_format: bool,
) -> list[BaseMessage]:
    """System instructions with the tools, the conversation, and on a retry what was wrong."""
    prompt = planner_opening(
        setup,
        PLANNER_INSTRUCTIONS,
        specs,
        state["messages"],
        text_format=TEXT_FORMAT if text_format else None,
    )
    if attempt:
        previous = render_plan(state.get("plan") or []) or EMPTY_PLAN
        prompt.append(
            HumanMessage(REPLAN_REQUEST.format(plan=previous, problem=state.get("plan_problem")))
        )
    return prompt


def make_plan(setup: AgentSetup) -> Callable[[dict[str, Any]], Body[dict[str, Any]]]:
    """Build the ``plan`` node for ``setup``."""

    def plan(state: dict[str, Any]) -> Body[dict[str, Any]]:
        run = setup.for_run()
        spent = budget_stop(state, run.limits)
        if spent:  # another plan would be a call past the budget; finish concludes
            return {"outcome": spent}
        specs = run.usable_specs(state)
        attempt = sum(is_rewoo_message(m, PLAN_KIND) for m in turn_messages(state["messages"]))
        typed = supports_schema(run.model, PlanSchema)
        prompt = planner_prompt(setup, state, specs, attempt=attempt, text_format=not typed)
        reply, steps, problems = yield from ask_for_plan(
            run.model,
            PlanSchema if typed else None,
            prompt,
            state,
            specs,
            from_schema=steps_from_schema,
            parse_text=parse_plan_text,
        )
        problems.extend(plan_problems(steps, [spec.name for spec in specs]))
        problem = " ".join(problems) or None
        content = render_plan(steps) or EMPTY_PLAN
        if problem:
            content += CANNOT_RUN_NOTE.format(problem=problem)
        message = AIMessage(
            content=content,
            usage_metadata=reply.message.usage_metadata,
            response_metadata={"runtime": RUNTIME, "kind": PLAN_KIND},
        )
        event = {**reply.event, "text": message.text}
        return {
            "messages": [message],
            "trajectory": [event],
            "plan": steps,
            "plan_problem": problem,
            "replans": attempt,
            "outcome": None,
            "to_run": [],
        }

    return plan
