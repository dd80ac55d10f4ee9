"""``plan``: one model call that writes the whole ReWOO plan, checked before anything runs.

The plan comes back through ``with_structured_output`` when the model
supports it, and as classic ``Plan: … #E1 = tool[input]`` text otherwise (or
when a structured reply cannot be read). Either way it is checked — unknown
tools, undefined, later or circular references, repeated variables — before
any tool runs; a second call is told exactly what was wrong.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from reasoning_graphs.nodes.planning import ask_for_plan, planner_opening, structured
from reasoning_graphs.nodes.rewoo_steps import (
    PLAN_KIND,
    RUNTIME,
    PlanSchema,
    is_rewoo_message,
    parse_plan_text,
    plan_problems,
    render_plan,
    steps_from_schema,
)
from reasoning_graphs.nodes.setup import AgentSetup
from reasoning_graphs.nodes.trajectory import thought_event
from reasoning_graphs.nodes.turn import turn_messages
from reasoning_graphs.prompts.rewoo import (
    PLANNER_INSTRUCTIONS,
    REPLAN_REQUEST,
    TEXT_FORMAT,
)
from reasoning_graphs.tools.spec import ToolSpec

MAX_REPLANS = 1
"""Further plan calls after an invalid plan; then the solver explains instead."""

EMPTY_PLAN = "Plan: no tool is needed."
CANNOT_RUN_NOTE = "\n[This plan cannot run: {problem}]"
OWN_RUNTIMES = (RUNTIME,)
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
        OWN_RUNTIMES,
        text_format=TEXT_FORMAT if text_format else None,
    )
    if attempt:
        previous = render_plan(state.get("plan") or []) or EMPTY_PLAN
        prompt.append(
            HumanMessage(REPLAN_REQUEST.format(plan=previous, problem=state.get("plan_problem")))
        )
    return prompt


def make_plan(setup: AgentSetup) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    """Build the ``plan`` node for ``setup``."""

    async def plan(state: dict[str, Any]) -> dict[str, Any]:
        run = setup.for_run()
        specs = run.usable_specs(state)
        attempt = sum(is_rewoo_message(m, PLAN_KIND) for m in turn_messages(state["messages"]))
        planner = structured(run.model, PlanSchema)
        prompt = planner_prompt(setup, state, specs, attempt=attempt, text_format=planner is None)
        started = time.perf_counter()
        raw, steps, problems = await ask_for_plan(
            run.model,
            planner,
            prompt,
            specs,
            from_schema=steps_from_schema,
            parse_text=parse_plan_text,
        )
        latency_ms = (time.perf_counter() - started) * 1000
        problems.extend(plan_problems(steps, [spec.name for spec in specs]))
        problem = " ".join(problems) or None
        content = render_plan(steps) or EMPTY_PLAN
        if problem:
            content += CANNOT_RUN_NOTE.format(problem=problem)
        message = AIMessage(
            content=content,
            usage_metadata=raw.usage_metadata,
            response_metadata={"runtime": RUNTIME, "kind": PLAN_KIND},
        )
        event = thought_event(state, reply=message, prompt=prompt, latency_ms=latency_ms)
        return {
            "messages": [message],
            "trajectory": [event],
            "plan": steps,
            "plan_problem": problem,
            "replans": attempt,
            "outcome": None,
            "pending": [],
        }

    return plan
