"""A response format the loop's own calls give, as ``create_agent`` gives LangChain's strategies.

A plain schema is answered after the loop (:mod:`~reasoning_graphs.nodes.steps.typed_answer`).
A ``ToolStrategy`` or ``ProviderStrategy`` names how the model is to give it, so the loop's
calls (``think``) give it themselves, each call as ``create_agent`` makes it:

- ``tool``: the schema is one more tool of the call, a call of some tool forced; the
  model's call of it is read and validated, and answered with a ``ToolMessage``; the
  value is the question's ``structured_response`` and ends it. A call that does not fit
  (or two of them) is told to the model in its ``ToolMessage`` as the strategy's
  ``handle_errors`` says, and the loop goes on; with ``handle_errors=False`` (or an error
  it does not name) LangChain's ``StructuredOutputError`` is raised from the call, where a
  ``wrap_model_call`` hook sees it.
- ``provider``: the call is bound with the provider's own ``response_format`` (OpenAI's
  ``json_schema`` form, as ``ProviderStrategy.to_model_kwargs`` writes it); a reply with no
  tool call is read as the JSON answer, and one that is none (a refusal) raises
  ``StructuredOutputValidationError``, as under ``create_agent``, where
  ``ModelRefusalMiddleware`` turns it into its ``ModelRefusalError``.

The value is read in the chain's last step, so each of a hook's handler calls reads its
own reply. What the reading writes beside the reply (the ``ToolMessage``, the value, the
answered outcome) travels as the reply's :attr:`~.request.ModelReply.writes`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from reasoning_graphs.response_format import AnswerInvalid, AnswerSchema

ERROR_TEMPLATE = "Error: {error}\n Please fix your mistakes."
"""What the model is told of a call that did not fit, with ``handle_errors=True``
(LangChain's words, so a prompt tuned for ``create_agent`` reads the same)."""
RETURNING = "Returning structured response: {value}"
"""The ``ToolMessage`` of a call that fit, unless the strategy gives its own."""
NOT_JSON = "the reply is no JSON object: {error}"
ANSWERED = {"status": "answered"}

Writes = tuple[dict[str, Any], ...]


def offered(
    answer: AnswerSchema | None, tools: Sequence[BaseTool], tool_choice: str | None
) -> tuple[Sequence[BaseTool], str | None]:
    """A call's tools and tool choice with a ``tool`` strategy's schema among them: a call of
    some tool forced (``"any"``), as ``create_agent`` does, unless the call chose already."""
    if answer is None or answer.strategy != "tool":
        return tools, tool_choice
    return [*tools, answer.tool], tool_choice or "any"


def provider_bound(
    model: BaseChatModel, tools: Sequence[BaseTool], tool_choice: str | None, answer: AnswerSchema
) -> Runnable:
    """``model`` bound to ``tools`` with the provider's own structured output of ``answer``."""
    spec: dict[str, Any] = {"name": answer.name, "schema": answer.json_schema}
    if answer.strict:
        spec["strict"] = True
    options: dict[str, Any] = {"response_format": {"type": "json_schema", "json_schema": spec}}
    if tool_choice is not None and tools:
        options["tool_choice"] = tool_choice
    try:
        return model.bind_tools(list(tools), **options)
    except NotImplementedError:  # a model with no tool calling may still take the format
        return model.bind(**options)


def read_answer(answer: AnswerSchema, message: AIMessage) -> tuple[Any, Writes]:
    """The typed answer ``message`` gives by ``answer``'s strategy (``None`` when it gives
    none) and what to write beside it.

    Raises:
        StructuredOutputError: The reply does not fit and the strategy lets it raise.
    """
    if answer.strategy == "provider":
        return _read_native(answer, message)
    return _read_call(answer, message)


def _read_native(answer: AnswerSchema, message: AIMessage) -> tuple[Any, Writes]:
    from langchain.agents.structured_output import StructuredOutputValidationError

    if message.tool_calls:  # the model calls tools first: no answer yet
        return None, ()
    try:
        try:
            data = json.loads(message.text)
        except ValueError as error:
            raise AnswerInvalid(NOT_JSON.format(error=error)) from None
        value = answer.validate(data)
    except AnswerInvalid as invalid:
        raise StructuredOutputValidationError(answer.name, invalid, message) from None
    return value, ({"structured_response": value},)


def _read_call(answer: AnswerSchema, message: AIMessage) -> tuple[Any, Writes]:
    from langchain.agents.structured_output import (
        MultipleStructuredOutputsError,
        StructuredOutputValidationError,
    )

    calls = [call for call in message.tool_calls if call["name"] == answer.name]
    if not calls:
        return None, ()
    error: Exception
    if len(calls) > 1:
        error = MultipleStructuredOutputsError([call["name"] for call in calls], message)
    else:
        try:
            value = answer.validate(calls[0]["args"])
        except AnswerInvalid as invalid:
            error = StructuredOutputValidationError(answer.name, invalid, message)
        else:
            said = answer.tool_message or RETURNING.format(value=value)
            note = ToolMessage(said, tool_call_id=calls[0]["id"], name=answer.name)
            others = len(message.tool_calls) > len(calls)  # they run first, then it ends
            ended = {} if others else {"outcome": ANSWERED}
            return value, ({"messages": [note], "structured_response": value, **ended},)
    told = _told(answer.handle_errors, error)
    if told is None:
        raise error
    notes = [
        ToolMessage(told, tool_call_id=call["id"], name=answer.name, status="error")
        for call in calls
    ]
    return None, ({"messages": notes},)


def _told(handle_errors: Any, error: Exception) -> str | None:
    """What the model is told of ``error`` by a ``ToolStrategy``'s ``handle_errors``, as
    LangChain reads it; ``None``: it is raised."""
    default = ERROR_TEMPLATE.format(error=error)
    if handle_errors is True:
        return default
    if handle_errors is False or handle_errors is None:
        return None
    if isinstance(handle_errors, str):
        return handle_errors
    if isinstance(handle_errors, (type, tuple)):
        return default if isinstance(error, handle_errors) else None
    return str(handle_errors(error))
