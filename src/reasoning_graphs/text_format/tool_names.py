"""Working out which tool an Action line names.

Models write the tool name loosely: quoted, bold, in another case, with its
arguments on the same line (``calculator[2+2]``, ``search: cats``), or inside a
sentence. This module separates the name from inline arguments, matches it to a
real tool without guessing between several, and recognises the ``Finish`` /
``Final Answer`` pseudo-tools that end a run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reasoning_graphs.text_format.blocks import (
    INPUT_START,
    Grammar,
    label_key,
    message,
    strip_wrappers,
)

NOT_A_TOOL_NAME = "{action} must be only the tool name, but it reads {text!r}."

CALL_RE = re.compile(
    r"(?P<name>[^\s\[\](){}（）【】:：,]+?)\s*(?P<open>[\[(（【])(?P<body>.*)[\])）】]\s*[.。]?",
    re.DOTALL,
)
"""A call written as ``name[body]`` or ``name(body)``, with ASCII or fullwidth brackets."""

_NAME_WITH_OBJECT_RE = re.compile(r"(?P<name>[^\s{:：,]+)\s*[:：,]?\s*(?P<body>\{.*)", re.DOTALL)
_NAME_COLON_INPUT_RE = re.compile(r"(?P<name>[\w.-]+)\s*[:：]\s*(?P<body>\S.*)", re.DOTALL)
_INLINE_INPUT_RES = (CALL_RE, _NAME_WITH_OBJECT_RE, _NAME_COLON_INPUT_RE)
_TOOL_NAME_RE = re.compile(r"[\w.\-/ ]{1,64}")
_WORD_RE = re.compile(r"[\w.-]+")
_MAX_NAME_WORDS = 3
_FINISH_NAMES = frozenset({"finish", "answer"})


@dataclass(frozen=True)
class Outcome:
    """A partial result: ``value`` read with ``exact`` strictness, or an ``error``."""

    value: Any = None
    exact: bool = True
    error: str | None = None


def split_action(content: str) -> tuple[str, str | None, bool]:
    """Tool name, arguments written on the Action line itself (if any), and exactness.

    Reads ``calculator``, ``calculator[2+2]``, ``calculator(expression="2+2")``,
    ``calculator {"expression": "2+2"}``, ``calculator: 2+2``, and a JSON input
    put on the next line.
    """
    head, _, rest = content.strip().partition("\n")
    name = strip_wrappers(head)
    exact = name == head.strip()
    inline: str | None = None
    call = next((match for regex in _INLINE_INPUT_RES if (match := regex.fullmatch(name))), None)
    if call:
        name, inline, exact = call.group("name"), call.group("body"), False
    elif rest.strip().startswith(INPUT_START):
        inline, exact = rest, False
    cleaned = strip_wrappers(name).rstrip(".。:：")
    return cleaned, inline, exact and cleaned == name


def name_key(name: str) -> str:
    """A tool or argument name compared loosely: case, quotes, spaces and dashes ignored."""
    return re.sub(r"[\s-]+", "_", strip_wrappers(name).lower())


def known_tool(name: str, tools: Mapping[str, dict]) -> str | None:
    """The real tool ``name`` means, ignoring case, quotes and separators, if unique."""
    if name in tools:
        return name
    matches = [tool for tool in tools if name_key(tool) == name_key(name)]
    return matches[0] if len(matches) == 1 else None


def resolve_tool(name: str, tools: Mapping[str, dict], grammar: Grammar) -> Outcome:
    """The tool an Action names; an unknown but name-like value passes through."""
    if name in tools:
        return Outcome(name)
    known = known_tool(name, tools) or only_tool_mentioned(name, tools)
    if known:
        return Outcome(known, exact=False)
    if _TOOL_NAME_RE.fullmatch(name) and len(name.split()) <= _MAX_NAME_WORDS:
        return Outcome(name, exact=len(name.split()) == 1)
    return Outcome(error=message(NOT_A_TOOL_NAME, grammar, text=name[:80]))


def only_tool_mentioned(text: str, tools: Mapping[str, dict]) -> str | None:
    """The one tool whose name appears as a word in ``text``."""
    words = {name_key(word) for word in _WORD_RE.findall(text)}
    mentioned = [tool for tool in tools if name_key(tool) in words]
    return mentioned[0] if len(mentioned) == 1 else None


def is_finish(name: str, tools: Mapping[str, dict], grammar: Grammar) -> bool:
    """A finish pseudo-tool (``Finish``, ``Final Answer``) unless a real tool has that name."""
    if known_tool(name, tools):
        return False
    key = name_key(name)
    return key in _FINISH_NAMES or grammar.roles.get(label_key(name)) == "final_answer"
