"""What the planning patterns share: the plan node, the planner's prompt and its structured
call with a text fallback, the closing call's prompt, and what a reference to a result means.

ReWOO and LLM Compiler both plan in one model call, checked before anything
runs, and both answer in a last call that reads the conversation and a report
of what the plan did (or why no plan could run). The pieces here are those two
patterns' common ground; each pattern keeps its own plan format
(:class:`PlanForm`), checks, reports and prompt text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from pydantic import BaseModel

from reasoning_graphs.effects import Body
from reasoning_graphs.metadata import Mark, is_bookkeeping, reused_from
from reasoning_graphs.nodes.guards.budget import budget_stop
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.model.call import ModelReply, ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.steps.prompts import (
    CANNOT_RUN_NOTE,
    NO_TOOLS,
    PLAN_FAILED_REPORT,
    TOOL_ENTRY,
)
from reasoning_graphs.question import question_answers
from reasoning_graphs.state import AgentState, Outcome, ThoughtEvent
from reasoning_graphs.tools.execute import observation_ref
from reasoning_graphs.tools.output import content_text
from reasoning_graphs.tools.spec import ToolSpec

UNREADABLE_PLAN = "The reply could not be read as a plan ({detail})."

NO_VALID_PLAN = "no usable plan after {attempts} attempts ({problem})"
# A reply that only repeats these is no answer (see reasoning_graphs.nodes.guards.honest).
own_texts(UNREADABLE_PLAN, NO_VALID_PLAN)

Step = TypeVar("Step")
TextParser = Callable[[str, Sequence[ToolSpec]], tuple[list[Step], list[str]]]
State = TypeVar("State", bound=AgentState)
PlanWriter = Callable[[RunScope, State, list[ToolSpec]], Body[Mapping[str, Any]]]
"""A pattern's plan step: (run, state, the tools it may plan with) → the node's update."""


class PlanningState(AgentState, Generic[Step]):
    """What the closing call reads of a planning pattern's state.

    Attributes:
        plan: The steps of the latest plan.
        plan_problem: Why the latest plan cannot run; ``None`` when it can.
    """

    plan: list[Step] | None
    plan_problem: str | None


def conversation(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The thread's questions and answers, without tool traffic and the patterns' own messages.

    Planner and solver (or joiner) each see the conversation as a dialogue: the
    tool calls of earlier questions and the plans a pattern wrote itself are
    bookkeeping, not the model's turns.
    """
    return [
        message
        for message in messages
        if isinstance(message, HumanMessage)
        or (
            isinstance(message, AIMessage)
            and not message.tool_calls
            and not is_bookkeeping(message)
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


def planner_opening(
    setup: AgentSetup,
    instructions: str,
    specs: Sequence[ToolSpec],
    messages: Sequence[AnyMessage],
    *,
    text_format: str | None = None,
) -> list[BaseMessage]:
    """The planner's system message (``instructions`` naming the tools), then the conversation.

    ``text_format`` is added to the instructions when the plan is to come back
    as text rather than structured.
    """
    system = instructions.format(tools=tool_catalogue(specs))
    if text_format:
        system = f"{system}\n\n{text_format}"
    return [
        SystemMessage(f"{setup.system_prompt}\n\n{system}"),
        *conversation(messages),
    ]


@dataclass(frozen=True)
class PlanForm(Generic[Step]):
    """How a pattern's plan is asked for and read.

    Attributes:
        instructions: The planner's instructions; ``{tools}`` is the tool catalogue.
        text_format: How to write the plan as text, for a model without structured output.
        schema: The structured plan, when the model supports one.
        from_schema: The steps of a structured plan.
        parse_text: The steps of a plan written as text, and what could not be read.
    """

    instructions: str
    text_format: str
    schema: type[BaseModel]
    from_schema: Callable[[Any], list[Step]]
    parse_text: TextParser[Step]


@dataclass(frozen=True)
class PlanDraft(Generic[Step]):
    """A plan as the planner wrote it, with everything that stops it from running.

    Attributes:
        reply: The planner's reply.
        steps: The plan's steps (kept when invalid, to show what was wrong).
        problem: Why the plan cannot run; ``None`` when it can.
    """

    reply: ModelReply
    steps: list[Step]
    problem: str | None

    def message(self, shown: str, written_as: Mark) -> tuple[AIMessage, ThoughtEvent]:
        """The plan as the thread keeps it (``shown``, and why it cannot run), and its event."""
        content = shown + (CANNOT_RUN_NOTE.format(problem=self.problem) if self.problem else "")
        message = AIMessage(
            content=content,
            usage_metadata=self.reply.message.usage_metadata,
            response_metadata=written_as,
        )
        return message, ThoughtEvent(**{**self.reply.event, "text": message.text})


def draft_plan(
    run: RunScope,
    form: PlanForm[Step],
    state: AgentState,
    specs: Sequence[ToolSpec],
    *,
    follow_up: Sequence[BaseMessage],
    check: Callable[[list[Step]], list[str]],
) -> Body[PlanDraft[Step]]:
    """Ask for a plan once, read it and ``check`` it, before anything runs.

    The planner sees its instructions with the tools, the conversation, then
    ``follow_up`` (what earlier plans of the question taught). The plan is
    typed when the model supports ``form.schema``, and a reply that does not
    fit is read as text instead; otherwise the model is asked for text in
    ``form.text_format``.
    """
    typed = run.setup.bindings.supports_schema(run.model, form.schema)
    opening = planner_opening(
        run.setup,
        form.instructions,
        specs,
        state["messages"],
        text_format=None if typed else form.text_format,
    )
    request = ModelRequest(prompt=[*opening, *follow_up], schema=form.schema if typed else None)
    reply = yield from call_model(run, request, state)
    problems: list[str] = []
    if reply.parsed is not None:
        steps = form.from_schema(reply.parsed)
    else:
        steps, problems = form.parse_text(reply.message.text, specs)
        if reply.parsing_error is not None and not steps:
            detail = str(reply.parsing_error).splitlines()[0]
            problems.append(UNREADABLE_PLAN.format(detail=detail))
    problems.extend(check(steps))
    return PlanDraft(reply=reply, steps=steps, problem=" ".join(problems) or None)


def plan_node(
    setup: AgentSetup, write_plan: PlanWriter[State]
) -> Callable[[State], Body[Mapping[str, Any]]]:
    """A ``plan`` node: ``write_plan`` with the tools this run may use, unless a budget is spent.

    A spent budget gets no plan call (it would be a call past the budget): the
    node only sets the outcome, and ``finish`` concludes.
    """

    def plan(state: State) -> Body[Mapping[str, Any]]:
        run = setup.for_run()
        spent = budget_stop(state, run.limits)
        if spent:
            return {"outcome": spent}
        return (yield from write_plan(run, state, run.usable_specs(state)))

    return plan


def no_valid_plan(attempts: int, problem: str) -> Outcome:
    """How a question ends when ``attempts`` plans could not run, the last for ``problem``."""
    reason = NO_VALID_PLAN.format(attempts=attempts, problem=problem.rstrip("."))
    return {"status": "incomplete", "reason": reason}


def closing_prompt(
    setup: AgentSetup,
    instructions: str,
    state: PlanningState[Step],
    report: Callable[[], str],
    render_plan: Callable[[list[Step]], str],
    instruction: str | None = None,
) -> list[BaseMessage]:
    """The closing call's prompt: instructions, the conversation, a report, then ``instruction``.

    The report is ``report()``, what the plan did; when no usable plan could be
    made it is the last plan (``render_plan``) and what was wrong with it.
    ``instruction`` is ``finish``'s request for a last answer when a budget
    stopped the plan part-way.
    """
    problem = state.get("plan_problem")
    if problem:
        shown = PLAN_FAILED_REPORT.format(
            plan=render_plan(state.get("plan") or []), problem=problem
        )
    else:
        shown = report()
    prompt: list[BaseMessage] = [
        SystemMessage(setup.instructed(instructions)),
        *conversation(state["messages"]),
        HumanMessage(shown),
    ]
    if instruction:
        prompt.append(HumanMessage(instruction))
    return prompt


def result_value(
    messages: Sequence[AnyMessage],
    observations: Mapping[str, str],
    answer: ToolMessage,
) -> str:
    """What a later step's reference to the call ``answer`` answers is replaced by.

    The tool's full text when its observation was cut. A call answered by
    reuse stands for the earlier identical call it names: its value is that
    call's result.
    """
    source = answer
    earlier = reused_from(answer)
    if earlier is not None:
        source = question_answers(messages).get(earlier, answer)
    full_text = observations.get(observation_ref(source.tool_call_id))
    return full_text if full_text is not None else content_text(source.content)
