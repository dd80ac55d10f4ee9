"""What a run may be given, checked before anything of it runs.

LangGraph writes a run's input into the state first and runs the reducers on
it later, so a malformed input (``{"messages": 5}``, a message of an unknown
role) fails mid-run and leaves its write in the thread, where every later read
of the thread's state fails again; an input key the graph does not know
(``{"question": ...}``) is dropped and the model answers an empty conversation.
A run option the context schema does not name is dropped too (by the dev
server) or fails as a bare ``TypeError``. So every run of our graphs, and the
server before it creates one, checks both here first: a clear
:class:`RunInputError` and nothing written, or a run that cannot fail on its input.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import fields, is_dataclass
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages

from reasoning_graphs.context import AgentContext, refuse_unknown_options
from reasoning_graphs.option_bounds import TOOLS_NOT_IN_GRAPH, ToolList, options_bounded_by
from reasoning_graphs.state import name_messages
from reasoning_graphs.tools.policy import APPROVE_ALL

NOT_AN_OBJECT = "A run's input must be an object such as {example}, not {kind}."
UNKNOWN_FIELDS = "Unknown input field(s) {names}; this graph takes {known}, e.g. {example}."
NO_MESSAGES = "A run's input needs at least one message, e.g. {example}."
NOT_MESSAGES = "The input's 'messages' must be a list of chat messages, not {kind}."
BAD_MESSAGE = "Input message {index} is not a chat message: {reason}"
CONTEXT_NOT_AN_OBJECT = "Run options must be an object of named options, not {kind}."
EXAMPLE = '{"messages": [{"role": "user", "content": "What is 23*17+4?"}]}'


TOOL_OPTIONS = options_bounded_by(AgentContext, ToolList)
"""Run options that name tools (their bound is a tool list)."""


class RunInputError(ValueError):
    """A run's input or options cannot be used; nothing of the run has happened."""


def check_input(value: Any, fields_known: Collection[str]) -> None:
    """Refuse an input the graph cannot take; ``None`` (carry on from the checkpoint) is fine.

    A dictionary may hold only the input's ``fields_known``; a chat graph's needs at
    least one message that LangChain can read (a message, a ``(role, text)`` pair, a
    ``{"role", "content"}`` object or a string).
    """
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise RunInputError(NOT_AN_OBJECT.format(example=EXAMPLE, kind=_kind(value)))
    unknown = sorted(str(name) for name in value if name not in fields_known)
    if unknown:
        raise RunInputError(
            UNKNOWN_FIELDS.format(names=unknown, known=sorted(fields_known), example=EXAMPLE)
        )
    if "messages" not in fields_known:
        return  # not a chat graph: its input is its own business
    messages = value.get("messages")
    if isinstance(messages, (str, BaseMessage, Mapping)):
        messages = [messages]
    if not messages:
        raise RunInputError(NO_MESSAGES.format(example=EXAMPLE))
    if not isinstance(messages, Sequence):
        raise RunInputError(NOT_MESSAGES.format(kind=_kind(messages)))
    for index, message in enumerate(messages, start=1):
        if isinstance(message, BaseMessage):
            continue
        try:
            convert_to_messages([message])
        except (ValueError, TypeError, NotImplementedError) as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise RunInputError(BAD_MESSAGE.format(index=index, reason=reason)) from None


def check_context(context: Any, schema: type | None, tool_names: Sequence[str] = ()) -> None:
    """Refuse run options that ``schema`` (a dataclass) does not name or does not accept.

    Tool lists may name only the graph's ``tool_names`` (``approve`` also ``"all"``):
    an approval list with a misspelt name would otherwise approve nothing.
    """
    if context is None or schema is None or not is_dataclass(schema):
        return
    if is_dataclass(context) and not isinstance(context, type):
        context = {item.name: getattr(context, item.name) for item in fields(context)}
    if not isinstance(context, Mapping):
        raise RunInputError(CONTEXT_NOT_AN_OBJECT.format(kind=_kind(context)))
    try:
        refuse_unknown_options(context, schema)
        schema(**context)
    except (TypeError, ValueError) as error:
        raise RunInputError(str(error)) from None
    if tool_names:
        for name in TOOL_OPTIONS:
            allowed = tool_choices(name, tool_names)
            outside = [tool for tool in context.get(name) or () if tool not in allowed]
            if outside:
                raise RunInputError(
                    TOOLS_NOT_IN_GRAPH.format(name=name, names=outside, known=allowed)
                )


def tool_choices(option: str, tool_names: Sequence[str]) -> list[str]:
    """The names a run option that names tools may hold: the graph's tools (and, for
    ``approve``, ``"all"``)."""
    return [*tool_names, APPROVE_ALL] if option == "approve" else list(tool_names)


def _kind(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"[:80]


def with_message_ids(value: Any) -> Any:
    """A checked input whose messages each carry an id: one the reducer would give anew each
    time the conversation is rebuilt from its saved writes, so a later step (a middleware's
    hook rewriting the question) could not name it."""
    if not isinstance(value, Mapping) or not value.get("messages"):
        return value
    given: Any = value["messages"]
    listed: Any = [given] if isinstance(given, (str, BaseMessage, Mapping)) else given
    messages = convert_to_messages(listed)
    name_messages(messages)
    return {**value, "messages": messages}
