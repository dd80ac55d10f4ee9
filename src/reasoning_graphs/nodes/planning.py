"""What the planning patterns share: the conversation a planner sees, the tool catalogue,
a structured call with a text fallback.

ReWOO and LLM Compiler both plan in one model call, checked before anything
runs, and both answer in a last call that reads the conversation and a report
of what the plan did. The pieces here are those two patterns' common ground;
each pattern keeps its own plan format, checks and prompt text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
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
from reasoning_graphs.metadata import is_bookkeeping, reused_from
from reasoning_graphs.nodes.model_call import ModelReply, ModelRequest, call_model
from reasoning_graphs.nodes.prompts import NO_TOOLS, TOOL_ENTRY
from reasoning_graphs.nodes.setup import AgentSetup
from reasoning_graphs.nodes.turn import turn_answers
from reasoning_graphs.tools.execute import observation_ref
from reasoning_graphs.tools.output import content_text
from reasoning_graphs.tools.spec import ToolSpec

UNREADABLE_PLAN = "The reply could not be read as a plan ({detail})."

Step = TypeVar("Step")
TextParser = Callable[[str, Sequence[ToolSpec]], tuple[list[Step], list[str]]]


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


def ask_for_plan(
    model: BaseChatModel,
    schema: type[BaseModel] | None,
    prompt: list[BaseMessage],
    state: Mapping[str, Any],
    specs: Sequence[ToolSpec],
    *,
    from_schema: Callable[[Any], list[Step]],
    parse_text: TextParser[Step],
) -> Body[tuple[ModelReply, list[Step], list[str]]]:
    """The planner's reply, its steps and the problems found reading it.

    With a ``schema`` (when the model supports one, see
    :func:`~reasoning_graphs.nodes.model_call.supports_schema`) the plan is
    typed, and a reply that does not fit is read as text instead; without one
    the model is asked plainly and its reply is read as text.
    """
    reply = yield from call_model(model, ModelRequest(prompt=prompt, schema=schema), state)
    if reply.parsed is not None:
        return reply, from_schema(reply.parsed), []
    steps, problems = parse_text(reply.message.text, specs)
    if reply.parsing_error is not None and not steps:
        detail = str(reply.parsing_error).splitlines()[0]
        problems.append(UNREADABLE_PLAN.format(detail=detail))
    return reply, steps, problems


def answer_prompt(
    setup: AgentSetup,
    instructions: str,
    dialogue: Sequence[AnyMessage],
    report: str,
    instruction: str | None = None,
) -> list[BaseMessage]:
    """The closing call's prompt: instructions, the conversation, the report, then ``instruction``.

    ``instruction`` is ``finish``'s request for a last answer when a budget
    stopped the plan part-way.
    """
    prompt: list[BaseMessage] = [
        SystemMessage(f"{setup.system_prompt}\n\n{instructions}"),
        *dialogue,
        HumanMessage(report),
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
        source = turn_answers(messages).get(earlier, answer)
    full_text = observations.get(observation_ref(source.tool_call_id))
    return full_text if full_text is not None else content_text(source.content)
