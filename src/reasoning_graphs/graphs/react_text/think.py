"""``think`` for the text ReAct format: generate, cut, parse, and turn the step into messages.

The model writes Thought / Action / Action Input (or Final Answer) as text.
Generation stops at the Observation label, anything the model invents after it
is cut, and the parsed step becomes an ordinary tool call — so approvals,
tools and checkpoints work exactly as in the native ReAct graph. A reply that
cannot be parsed becomes a corrective observation; after too many in a row
the run stops and says the model drifted out of the format.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.metadata import FORMAT_ERROR, RAW, format_error_of
from reasoning_graphs.models.local import LocalChatModel
from reasoning_graphs.nodes.guards.advice import advice_for, advised, with_note
from reasoning_graphs.nodes.model.call import ModelReply, ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.model.view import model_view
from reasoning_graphs.nodes.steps.answer_turn import (
    ANSWER_TOKENS,
    answer_turn,
    answer_without_calls,
)
from reasoning_graphs.nodes.steps.reflect import with_reflection
from reasoning_graphs.question import request_index
from reasoning_graphs.state import AgentState, AgentUpdate, Outcome
from reasoning_graphs.text_format import (
    Labels,
    ParsedStep,
    build_system_prompt,
    format_error_observation,
    format_reminder,
    parse_step,
    stop_sequences,
)
from reasoning_graphs.text_format.grammar import react_text_gbnf
from reasoning_graphs.text_format.transcript import render_transcript
from reasoning_graphs.tools.spec import ToolSpec

PARSE_LEVEL = "parse_level"
"""On a text-format reply and its thought event: how the reply was read
(``exact``, ``fuzzy`` or ``fallback``)."""

FORMAT_DRIFT = (
    "format drift: {count} replies in a row were not in the Thought/Action/Final Answer "
    "format (last problem: {error})"
)


def is_format_error(message: BaseMessage) -> bool:
    """Whether ``message`` is a reply that could not be read in the format."""
    return isinstance(message, AIMessage) and format_error_of(message) is not None


def consecutive_format_errors(messages: Sequence[AnyMessage]) -> int:
    """How many of the turn's latest replies in a row were malformed."""
    request = request_index(messages)
    first = 0 if request is None else request + 1
    count = 0
    for index in range(len(messages) - 1, first - 1, -1):  # from the latest, no copy
        if not is_format_error(messages[index]):
            break
        count += 1
    return count


class TextFormat:
    """The text format in one label set: its prompts, generation options and parsing.

    ``grammar``: ``None`` constrains llama.cpp models with the format's grammar
    and leaves others free; ``True`` requires a llama.cpp model; ``False`` never
    uses a grammar.
    """

    def __init__(self, labels: Labels, *, grammar: bool | None) -> None:
        self.labels = labels
        self.grammar = grammar

    def prompt(
        self, run: RunScope, specs: Sequence[ToolSpec], messages: Sequence[AnyMessage]
    ) -> list[BaseMessage]:
        """The run's own instructions (``system_prompt``, when given) and the format's with
        the tools, then the conversation written in it."""
        system = run.setup.instructed(_system_prompt(_tools_key(specs), self.labels))
        return [SystemMessage(system), *render_transcript(messages, self.labels)]

    def request(
        self, model: BaseChatModel, specs: Sequence[ToolSpec], prompt: list[BaseMessage]
    ) -> ModelRequest:
        """Stop at the Observation label; in grammar mode, also constrain llama.cpp's output."""
        wanted = self.grammar or (self.grammar is None and isinstance(model, LocalChatModel))
        grammar = None
        if wanted and specs:  # the model call refuses a grammar for other models
            grammar = react_text_gbnf([spec.name for spec in specs], self.labels)
        return ModelRequest(prompt=prompt, stop=stop_sequences(self.labels), grammar=grammar)

    def parse(self, text: str, specs: Sequence[ToolSpec]) -> ParsedStep:
        """One reply read as a step: an action, a final answer or a format error."""
        schemas = {spec.name: spec.argument_schema() for spec in specs}
        return parse_step(text, schemas, self.labels)

    def ask_final(self, run: RunScope, state: AgentState, instruction: str) -> Body[ModelReply]:
        """A last answer in the text format (an answer turn, or ``finish``): the answer text,
        not the raw reply, capped as every answer asked with tools off is."""
        specs = run.usable_specs(state)
        shown = model_view(state["messages"], run.registry)
        prompt = [*self.prompt(run, specs, shown), HumanMessage(instruction)]
        stop = stop_sequences(self.labels)
        request = ModelRequest(prompt=prompt, stop=stop, reply_tokens=ANSWER_TOKENS)
        reply = yield from call_model(run, request, state)
        step = self.parse(reply.message.text, specs)
        if step.kind == "final" and step.answer:
            answer = step.answer
        else:  # an action asked for all the same is not run: its thought is all it said
            answer = step.thought if step.kind == "action" else reply.message.text
        usage = reply.message.usage_metadata
        return replace(reply, message=AIMessage(content=answer, usage_metadata=usage))


def make_think_text(
    setup: AgentSetup,
    text_format: TextFormat,
    *,
    max_format_errors: int,
    remind_format: bool = False,
) -> Callable[[AgentState], Body[AgentUpdate]]:
    """Build the text-format ``think`` node; ``remind_format``: the format restated at the end
    of every prompt (a run may turn it on), not only in a corrective observation."""

    def think(state: AgentState) -> Body[AgentUpdate]:
        run = setup.for_run()
        specs = run.usable_specs(state)
        turn = answer_turn(state, run.limits) if specs else None
        if turn is not None:  # the answer now, tools off
            final = yield from text_format.ask_final(run, state, turn.advice)
            return answer_without_calls(final, turn)
        messages = state["messages"]
        shown = model_view(messages, run.registry)
        prompt = with_reflection(text_format.prompt(run, specs, shown), state)
        prompt = advised(prompt, advice_for(messages, run.limits))
        if run.option("remind_format", remind_format) and not is_format_error(messages[-1]):
            prompt = with_note(prompt, format_reminder(text_format.labels))
        request = text_format.request(run.model, specs, prompt)
        replied = yield from call_model(run, request, state)
        reply = replied.message
        step = text_format.parse(reply.text, specs)
        message = _step_message(step, reply, text_format.labels, specs)
        outcome: Outcome | None = None
        if step.kind == "final":
            outcome = {"status": "answered"}
        elif step.kind == "error":
            count = consecutive_format_errors(state["messages"]) + 1
            if count >= max_format_errors:
                reason = FORMAT_DRIFT.format(count=count, error=step.error)
                outcome = {"status": "incomplete", "reason": reason}
        event = {**replied.event, PARSE_LEVEL: step.level}
        if step.kind == "action":  # a round of tool calls, as the budgets count rounds
            event["tool_calls"] = [step.tool or ""]
        return {"messages": [message], "trajectory": [event], "outcome": outcome, "to_run": []}

    return think


def _step_message(
    step: ParsedStep, reply: AIMessage, labels: Labels, specs: Sequence[ToolSpec]
) -> AIMessage:
    """The parsed step as the loop reads it: a tool call, a final answer, or a reply
    that carries its corrective observation; each keeps the text it was parsed from."""
    metadata: dict[str, Any] = {RAW: step.text, PARSE_LEVEL: step.level}
    if step.kind == "action":
        call = {
            "name": step.tool or "",
            "args": step.args,
            "id": f"call_{uuid.uuid4().hex[:16]}",
            "type": "tool_call",
        }
        return AIMessage(
            content=step.thought,
            tool_calls=[call],
            response_metadata=metadata,
            usage_metadata=reply.usage_metadata,
        )
    if step.kind == "final":
        return AIMessage(
            content=step.answer or "",
            response_metadata=metadata,
            usage_metadata=reply.usage_metadata,
        )
    metadata[FORMAT_ERROR] = format_error_observation(
        step.error or "", [spec.name for spec in specs], labels
    )
    return AIMessage(content="", response_metadata=metadata, usage_metadata=reply.usage_metadata)


ToolsKey = tuple[tuple[str, str, str], ...]
"""The tools as the system prompt describes them: name, description, argument schema (JSON)."""


def _tools_key(specs: Sequence[ToolSpec]) -> ToolsKey:
    return tuple(
        (spec.name, spec.description, json.dumps(spec.argument_schema(), sort_keys=True))
        for spec in specs
    )


@lru_cache(maxsize=32)
def _system_prompt(tools: ToolsKey, labels: Labels) -> str:
    """The format's instructions for ``tools``: written once for each set of tools a run
    offers, not at every model call."""
    described = [
        {"name": name, "description": description, "parameters": json.loads(schema)}
        for name, description, schema in tools
    ]
    return build_system_prompt(described, labels)
