"""Tool calls put back together when a server repeats a call's name in every streamed chunk.

OpenAI sends a call's name in its first chunk only. llama.cpp's server
(``python -m llama_cpp.server``) sends it, with the call's id, in every chunk,
and LangChain joins the chunks of one call by concatenating their strings (ids
that repeat are kept once, names are not). So a streamed call to ``Plan``
arrives as ``PlanPlanPlan…``: it matches no tool, and a typed reply fails to
parse. A call is streamed whenever a budget is watched or LangGraph streams
messages, so this happens on every face. A name made only of copies of a name
the request offered is that name; the typed reply is then parsed again.

Examples:
    >>> from langchain_core.messages import AIMessage
    >>> call = {"name": "addadd", "args": {"a": 1}, "id": "c1", "type": "tool_call"}
    >>> named_calls(AIMessage("", tool_calls=[call]), ["add"]).tool_calls[0]["name"]
    'add'
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from langchain_core.messages import AIMessage
from pydantic import BaseModel, ValidationError


def named_calls(message: AIMessage, names: Collection[str]) -> AIMessage:
    """``message`` with each call's name that repeats one of ``names`` set to that name."""
    update: dict[str, Any] = {}
    for key in ("tool_calls", "invalid_tool_calls"):
        calls = getattr(message, key)
        mended = [_renamed(call, names) for call in calls]
        if mended != calls:
            update[key] = mended
    legacy = message.additional_kwargs.get("function_call")
    if isinstance(legacy, dict) and _offered(legacy.get("name"), names):
        legacy = _renamed(legacy, names)
        update["additional_kwargs"] = {**message.additional_kwargs, "function_call": legacy}
    return message.model_copy(update=update) if update else message


def typed_reply(
    result: Mapping[str, Any], schema: type[BaseModel]
) -> tuple[AIMessage, BaseModel | None, Exception | None]:
    """The raw message, the parsed object and the parsing error of a typed call's result
    (``with_structured_output(..., include_raw=True)``), parsed again when the raw reply's
    call needed its name mended."""
    message: AIMessage = result["raw"]
    parsed: BaseModel | None = result.get("parsed")
    unparsed: Exception | None = result.get("parsing_error")
    name = schema_name(schema)
    mended = named_calls(message, [name])
    if parsed is not None or mended is message:
        return message, parsed, unparsed
    for call in mended.tool_calls:
        if call["name"] == name:
            try:
                return mended, schema.model_validate(call["args"]), None
            except ValidationError as error:
                return mended, None, error
    return mended, None, unparsed


def schema_name(schema: type[BaseModel]) -> str:
    """The function name a typed request offers the model: the schema's title."""
    return schema.model_config.get("title") or schema.__name__


def _renamed(call: Any, names: Collection[str]) -> Any:
    name = _offered(call.get("name"), names)
    return {**call, "name": name} if name else call


def _offered(name: Any, names: Collection[str]) -> str | None:
    """The offered name that ``name`` repeats two or more times, if any."""
    if not isinstance(name, str) or name in names:
        return None
    for known in names:
        copies, rest = divmod(len(name), len(known)) if known else (0, 1)
        if copies > 1 and not rest and name == known * copies:
            return known
    return None
