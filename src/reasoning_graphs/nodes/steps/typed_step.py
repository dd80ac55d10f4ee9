"""A ReAct step as a typed reply, and the ordinary messages it becomes.

With ``step_format="structured"`` the model answers each turn with one :class:`TypedStep`:
its ``thought``, an ``action`` (one of the run's tools, or ``final_answer``), the tool's
``input``, its ``confidence`` (0 to 1) and ``needs_more_info``. The action is an enum
of the tools the run offers, so the schema itself refuses a tool that is not there.
The reply comes the way the model seam asks for any typed reply: under the embedded
model's JSON-schema grammar, elsewhere as a call of the schema (as LangChain's
``ToolStrategy`` does). A step naming a tool becomes an ordinary tool call, so
approvals, budgets and checkpoints are the shared loop's; a step that does not fit the
schema becomes an invalid call, which the loop answers with what was wrong.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Annotated, Any, Literal

from langchain_core.messages import AIMessage, InvalidToolCall, ToolCall
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    WithJsonSchema,
    create_model,
    model_validator,
)

from reasoning_graphs.errors import validation_problems
from reasoning_graphs.nodes.steps.plan import tool_catalogue
from reasoning_graphs.tools.spec import ToolSpec

FINAL_ANSWER = "final_answer"
STEP_SCHEMA = "Step"
"""The name a typed step goes by: the function a provider is offered, the grammar's root."""
TYPED_STEP = "typed_step"
"""On the message a typed step became: the step's fields (thought, action, confidence …)."""

STEP_INSTRUCTIONS = """\
Reply to every turn with one Step:
- thought: what you know, what you still need, and why this action (and this tool, not another);
- action: the name of one tool below, or "final_answer" once you can answer;
- input: the tool's arguments as a JSON object ({{}} with final_answer);
- answer: with final_answer, your answer for the user ("" with a tool);
- confidence: from 0 to 1, how sure you are that this step is right;
- needs_more_info: true when only the user can give what is missing; then write your \
question for the user in question.

Tools:
{tools}"""
NO_TOOLS = "(none: answer with final_answer)"
ACTION = 'A tool\'s name, or "final_answer" once you can answer.'
INPUT = "The tool's arguments; {} with final_answer."
NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
UNFIT_STEP = "the reply was no Step of this schema ({error}); reply with one Step that fits it"
NO_ANSWER = "a final_answer Step needs its answer"
NO_STEP = "(no Step)"


class TypedStep(BaseModel):
    """One ReAct step as the model writes it; :func:`step_schema` narrows ``action`` to the
    run's tools."""

    model_config = ConfigDict(title=STEP_SCHEMA)

    thought: str = Field(
        description="What you know, what you still need, and why this action and tool."
    )
    action: str = Field(description=ACTION)
    input: dict[str, Any] = Field(description=INPUT)
    answer: str = Field(description='With final_answer: the answer for the user; else "".')
    confidence: float = Field(ge=0, le=1, description="How sure you are of this step, 0 to 1.")
    needs_more_info: bool = Field(
        default=False, description="Only the user can give what is missing."
    )
    question: str = Field(default="", description="With needs_more_info: your question.")

    @model_validator(mode="after")
    def _answered(self) -> TypedStep:
        """A final answer says something: an empty one is sent back, not shown to the user."""
        if self.action == FINAL_ANSWER and not self.answer.strip():
            raise ValueError(NO_ANSWER)
        return self


ToolsKey = tuple[tuple[str, str], ...]
"""The tools a step may name: each one's name and argument schema (JSON)."""


def step_schema(specs: Sequence[ToolSpec]) -> type[TypedStep]:
    """The step schema for the tools ``specs``: ``action`` one of their names or
    ``final_answer``, ``input`` the arguments of one of them (or none), so that a grammar
    writes arguments a tool takes."""
    return _step_schema(
        tuple((spec.name, json.dumps(spec.argument_schema(), sort_keys=True)) for spec in specs)
    )


@lru_cache(maxsize=64)
def _step_schema(tools: ToolsKey) -> type[TypedStep]:
    """One class per set of tools, so a graph's bindings reuse it from call to call."""
    choices: Any = Literal[(*(name for name, _ in tools), FINAL_ANSWER)]
    arguments = [_arguments(json.loads(schema)) for _, schema in tools]
    inputs = {"anyOf": [*arguments, NO_ARGUMENTS], "description": INPUT}
    schema: type[TypedStep] = create_model(
        STEP_SCHEMA,
        __base__=TypedStep,
        __module__=__name__,
        action=(choices, Field(description=ACTION)),
        input=(Annotated[dict[str, Any], WithJsonSchema(inputs)], Field()),
    )
    return schema


def _arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's argument schema as a step's ``input`` offers it: its fields, not its prose."""
    return {key: schema[key] for key in ("type", "properties", "required") if key in schema}


def step_instructions(specs: Sequence[ToolSpec]) -> str:
    """What a typed step is and the tools it may name, for the system prompt."""
    return STEP_INSTRUCTIONS.format(tools=tool_catalogue(specs) if specs else NO_TOOLS)


def step_message(step: TypedStep, reply: AIMessage) -> AIMessage:
    """``step`` as the loop reads a turn: a tool call with the thought as its text, or the
    final answer; the step's fields stay on the message (:data:`TYPED_STEP`)."""
    fields = step.model_dump()
    common: dict[str, Any] = {
        "id": reply.id,
        "response_metadata": {**reply.response_metadata, TYPED_STEP: fields},
        "usage_metadata": reply.usage_metadata,
    }
    if step.action == FINAL_ANSWER:
        return AIMessage(content=step.answer, **common)
    call = ToolCall(
        name=step.action, args=step.input, id=f"call_{uuid.uuid4().hex[:24]}", type="tool_call"
    )
    # never empty: some servers refuse a turn with calls and no text (llama.cpp's, for one)
    return AIMessage(content=step.thought.strip() or step.action, tool_calls=[call], **common)


def unfit_step_message(reply: AIMessage, error: object) -> AIMessage:
    """A reply that was no step of the schema, as an invalid call of it: the loop answers
    it with what was wrong, and the model tries again."""
    raw = reply.tool_calls[0]["args"] if reply.tool_calls else reply.text
    written = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
    bad = InvalidToolCall(
        type="invalid_tool_call",
        name=STEP_SCHEMA,
        args=written,
        id=f"call_{uuid.uuid4().hex[:24]}",
        error=UNFIT_STEP.format(error=_short(error)),
    )
    return AIMessage(
        content=written.strip() or NO_STEP,  # what the model wrote, shown back to it
        id=reply.id,
        invalid_tool_calls=[bad],
        response_metadata=reply.response_metadata,
        usage_metadata=reply.usage_metadata,
    )


def typed_step_of(message: AIMessage) -> Mapping[str, Any] | None:
    """The typed step a message was made from, if it was."""
    step = message.response_metadata.get(TYPED_STEP)
    return step if isinstance(step, Mapping) else None


def _short(error: object) -> str:
    """What is wrong with a step, field by field (``step`` for the step as a whole)."""
    return validation_problems(
        error if isinstance(error, BaseException) else ValueError(error), "step"
    )
