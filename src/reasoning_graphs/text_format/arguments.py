"""Reading an Action Input and fitting it to the tool's argument schema.

An Action Input may be a JSON object, almost-JSON, ``key=value`` pairs or a bare
value. This module reads it, renames keys to the schema properties they mean,
sends a bare value to a tool's single argument, and says precisely what is wrong
when the input cannot be used. Argument types are left to the runtime.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from reasoning_graphs.text_format.blocks import Grammar, message
from reasoning_graphs.text_format.json_repair import (
    first_object,
    parse_pairs,
    remove_fences,
)
from reasoning_graphs.text_format.tool_names import Outcome, name_key

NEEDS_OBJECT = "{action_input} for {tool!r} must be a JSON object with the keys: {keys}."
TAKES_NO_ARGUMENTS = "{tool!r} takes no arguments; write {action_input}: {{}}."
BAD_JSON = "{action_input} is not a readable JSON object: {text!r}."

RAW_INPUT_KEY = "input"
"""Where a bare-string input goes when the tool is unknown and has no schema to map it to."""

_PAIRED = {"`": "`", "'": "'", '"': '"', "“": "”", "‘": "’", "「": "」", "*": "*"}


def read_input(raw: str, grammar: Grammar) -> Outcome:
    """The value of an Action Input: a dict when it holds an object, else a bare value."""
    text = raw.strip()
    if not text:
        return Outcome(None)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        return Outcome(value)
    if isinstance(value, (str, int, float, bool, list)):
        return Outcome(value, exact=False)
    body = remove_fences(text).strip()
    found = first_object(body)
    if found is not None:
        return Outcome(found, exact=False)
    if body.startswith("{"):
        return Outcome(error=message(BAD_JSON, grammar, text=body[:80]))
    return Outcome(_bare(body), exact=False)


def _bare(text: str) -> Any:
    """A non-object input: a JSON scalar or list decoded, else the text unwrapped."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return unwrap(text)


def unwrap(text: str) -> str:
    """Remove matching pairs of quotes, backticks or emphasis around ``text``."""
    text = text.strip()
    while len(text) >= 2 and _PAIRED.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return text


def read_arguments(
    tool: str, raw: str | None, tools: Mapping[str, dict], grammar: Grammar
) -> Outcome:
    """``raw`` read and mapped onto ``tool``'s schema."""
    read = read_input(raw or "", grammar)
    if read.error:
        return read
    fitted = _fit(tool, read.value, tools.get(tool), grammar)
    exact = read.exact and fitted.exact and bool(raw and raw.strip())
    return Outcome(fitted.value, exact, fitted.error)


def only_tool_fitting(value: Any, tools: Mapping[str, dict]) -> str | None:
    """The one tool whose schema has every key of ``value`` and needs no other."""
    if not isinstance(value, dict) or not value:
        return None
    keys = set(value)
    fitting = [
        tool
        for tool, schema in tools.items()
        if keys <= set(_properties(schema)) and set(_required(schema)) <= keys
    ]
    return fitting[0] if len(fitting) == 1 else None


def _fit(tool: str, value: Any, schema: dict | None, grammar: Grammar) -> Outcome:
    """Map a read value onto the schema's properties.

    A dict keeps its values, with keys renamed to the property they mean; a bare
    value goes to the tool's single argument. Types are left to the runtime.
    """
    if value is None or value == "":
        return Outcome({})
    if schema is None:
        return Outcome(value if isinstance(value, dict) else {RAW_INPUT_KEY: value})
    properties, required = _properties(schema), _required(schema)
    if isinstance(value, str):
        pairs = parse_pairs(value)
        if pairs and all(_property_for(key, properties) for key in pairs):
            value = pairs
    if isinstance(value, dict):
        return _match_keys(value, properties, required)
    target = _single_argument(properties, required)
    if target:
        return Outcome({target: value}, exact=False)
    keys = ", ".join(required or properties)
    template = NEEDS_OBJECT if properties else TAKES_NO_ARGUMENTS
    return Outcome(error=message(template, grammar, tool=tool, keys=keys))


def _match_keys(value: dict, properties: dict[str, Any], required: list[str]) -> Outcome:
    """Rename keys to the properties they mean; one stray key goes to a lone argument."""
    args = {str(key): item for key, item in value.items()}
    renamed = {_property_for(key, properties) or key: item for key, item in args.items()}
    target = _single_argument(properties, required)
    if len(renamed) == 1 and target and not set(renamed) & set(properties):
        renamed = {target: next(iter(renamed.values()))}
    return Outcome(renamed, exact=renamed == args)


def _property_for(key: str, properties: Mapping[str, Any]) -> str | None:
    """The property ``key`` names, ignoring case, spaces and dashes."""
    if key in properties:
        return key
    matches = [name for name in properties if name_key(name) == name_key(key)]
    return matches[0] if len(matches) == 1 else None


def _properties(schema: Any) -> dict[str, Any]:
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return dict(properties) if isinstance(properties, Mapping) else {}


def _required(schema: Any) -> list[str]:
    required = schema.get("required") if isinstance(schema, Mapping) else None
    if not isinstance(required, list):
        return []
    return [name for name in required if isinstance(name, str)]


def _single_argument(properties: Mapping[str, Any], required: list[str]) -> str | None:
    """The argument a bare value fills: the only required one, else the only property."""
    if len(required) == 1:
        return required[0]
    return next(iter(properties)) if len(properties) == 1 else None
