"""``plan``: one model call that writes the whole ReWOO plan, checked before anything runs.

The plan comes back through ``with_structured_output`` when the model
supports it, and as classic ``Plan: … #E1 = tool[input]`` text otherwise (or
when a structured reply cannot be read). Either way it is checked — unknown
tools, undefined, later or circular references, repeated variables — before
any tool runs; a second call is told exactly what was wrong.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from reasoning_graphs.nodes.rewoo_steps import (
    PLAN_KIND,
    RUNTIME,
    UNREADABLE_PLAN,
    PlanSchema,
    PlanStep,
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
    NO_TOOLS,
    PLANNER_INSTRUCTIONS,
    REPLAN_REQUEST,
    TEXT_FORMAT,
    TOOL_ENTRY,
)
from reasoning_graphs.tools.spec import ToolSpec

MAX_REPLANS = 1
"""Further plan calls after an invalid plan; then the solver explains instead."""

EMPTY_PLAN = "Plan: no tool is needed."
CANNOT_RUN_NOTE = "\n[This plan cannot run: {problem}]"


def conversation(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The thread's questions and answers, without plans and tool traffic.

    Planner and solver each see the conversation as a dialogue; the tool calls
    of earlier questions are this pattern's bookkeeping, not the model's turns.
    """
    return [
        message
        for message in messages
        if isinstance(message, HumanMessage)
        or (
            isinstance(message, AIMessage)
            and not message.tool_calls
            and not is_rewoo_message(message)
        )
    ]


def tool_catalogue(specs: Iterable[ToolSpec]) -> str:
    """The tools as the planner reads them: name, description and argument schema."""
    entries = [
        TOOL_ENTRY.format(
            name=spec.name,
            description=spec.description,
            schema=json.dumps(spec.argument_schema().get("properties", {}), ensure_ascii=False),
        )
        for spec in specs
    ]
    return "\n".join(entries) or NO_TOOLS


def planner_prompt(
    setup: AgentSetup,
    state: dict[str, Any],
    specs: Sequence[ToolSpec],
    *,
    attempt: int,
    text_format: bool,
) -> list[BaseMessage]:
    """System instructions with the tools, the conversation, and on a retry what was wrong."""
    instructions = PLANNER_INSTRUCTIONS.format(tools=tool_catalogue(specs))
    if text_format:
        instructions = f"{instructions}\n\n{TEXT_FORMAT}"
    prompt: list[BaseMessage] = [
        SystemMessage(f"{setup.system_prompt}\n\n{instructions}"),
        *conversation(state["messages"]),
    ]
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
        planner = _structured_planner(run.model)
        prompt = planner_prompt(setup, state, specs, attempt=attempt, text_format=planner is None)
        started = time.perf_counter()
        if planner is None:
            raw = await run.model.ainvoke(prompt)
            steps, problems = parse_plan_text(raw.text, specs)
        else:
            raw, steps, problems = await _ask_structured(planner, prompt, specs)
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


def _structured_planner(model: BaseChatModel) -> Runnable | None:
    """The model returning a :class:`PlanSchema`, or ``None`` when it cannot."""
    try:
        return model.with_structured_output(PlanSchema, include_raw=True)
    except NotImplementedError:
        return None


async def _ask_structured(
    planner: Runnable, prompt: list[BaseMessage], specs: Sequence[ToolSpec]
) -> tuple[AIMessage, list[PlanStep], list[str]]:
    """A structured plan; a reply that does not fit the schema is read as text instead."""
    result = await planner.ainvoke(prompt)
    raw: AIMessage = result["raw"]
    if result["parsed"] is not None:
        return raw, steps_from_schema(result["parsed"]), []
    steps, problems = parse_plan_text(raw.text, specs)
    error = result.get("parsing_error")
    if error is not None and not steps:
        problems.append(UNREADABLE_PLAN.format(detail=str(error).splitlines()[0]))
    return raw, steps, problems
