"""Parsing one text-format ReAct reply into an action, a final answer or an error.

A reply is read in three passes, each forgiving more than the one before:

1. **exact** — the canonical format the prompt asks for.
2. **fuzzy** — the same structure written loosely: odd spacing, case or colons,
   Markdown bold, ``tool[args]`` call syntax, almost-JSON, a missing label that
   can be inferred without guessing.
3. **fallback** — prose without any decision label that still reads as an answer.

Before parsing, text the model was not entitled to write is cut off: an invented
Observation and everything after it, and anything after the first decision
(a second action, or new blocks after a Final Answer). :func:`parse_step` never
raises; whatever it cannot use becomes ``kind="error"`` with a message short and
specific enough to be shown to the model as a corrective observation.

This module decides what the reply asks for. Finding labels and cutting lives in
:mod:`~reasoning_graphs.text_format.blocks`, matching tool names in
:mod:`~reasoning_graphs.text_format.tool_names`, and reading and fitting the
Action Input in :mod:`~reasoning_graphs.text_format.arguments`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from reasoning_graphs.text_format.arguments import BAD_JSON as BAD_JSON
from reasoning_graphs.text_format.arguments import NEEDS_OBJECT as NEEDS_OBJECT
from reasoning_graphs.text_format.arguments import RAW_INPUT_KEY as RAW_INPUT_KEY
from reasoning_graphs.text_format.arguments import TAKES_NO_ARGUMENTS as TAKES_NO_ARGUMENTS
from reasoning_graphs.text_format.arguments import (
    only_tool_fitting,
    read_arguments,
    read_input,
    unwrap,
)
from reasoning_graphs.text_format.blocks import (
    WRAPPER_CHARS,
    Block,
    Grammar,
    calls_nothing,
    cut_index,
    grammar_for,
    message,
    segment,
    strip_wrappers,
)
from reasoning_graphs.text_format.blocks import Role as Role
from reasoning_graphs.text_format.json_repair import first_object, remove_fences
from reasoning_graphs.text_format.labels import ENGLISH, Labels
from reasoning_graphs.text_format.tool_names import (
    CALL_RE,
    is_finish,
    known_tool,
    only_tool_mentioned,
    resolve_tool,
    split_action,
)
from reasoning_graphs.text_format.tool_names import NOT_A_TOOL_NAME as NOT_A_TOOL_NAME

EMPTY_REPLY = "The reply is empty."
NO_DECISION = "No {action} or {final_answer} found; the reply looks unfinished."
INVENTED_OBSERVATION = (
    "You wrote an {observation} yourself and no {action} before it; write one {action} "
    "and {action_input}, then stop: the system adds the {observation}."
)
NOT_AN_ANSWER = "No {action} or {final_answer} found, and the text does not read as an answer."
EMPTY_FINAL = "{final_answer} is empty."
NO_TOOL = "{action} names no tool."
INPUT_WITHOUT_ACTION = "{action_input} given, but no {action} line names the tool."

Kind = Literal["action", "final", "error"]
Level = Literal["exact", "fuzzy", "fallback"]

_SPECIAL_TOKEN_RE = re.compile(r"<\|[\w.-]{1,40}\|>(?:(?:system|user|assistant)\b)?|</?s>")
_FENCE_EDGES_RE = re.compile(r"\A\s*```[\w+-]*|```[\w+-]*\s*\Z")
_CALL_NAME_KEYS = ("action", "tool", "tool_name", "name", "function")
_CALL_INPUT_KEYS = ("action_input", "tool_input", "arguments", "args", "parameters", "input")

_UNFINISHED_RE = re.compile(
    r"\bI\s+(?:need|have|want)\s+to\b|\bI\s+will\b|\bI'll\b|\bI\s+am\s+going\s+to\b"
    r"|\bI'm\s+going\s+to\b|\blet\s+me\b(?!\s+know)|\blet's\b"
    r"|\bI\s+should\s+(?:use|call|search|look|check|try|run|find|compute|calculate|first)\b"
    r"|\bI\s+must\b|\bwe\s+(?:need|have)\s+to\b|\bnext(?:,|\s+(?:step|I|we)\b)|\bfirst,?\s+I\b"
    r"|我需要|我将|我会|让我|接下来|下一步|我应该|我要|需要先|:\s*\Z|：\s*\Z",
    re.IGNORECASE,
)
_CONCLUSION_RE = re.compile(
    r"\b(?:the|my|final)\s+answer\s+is\b|\btherefore\b|\bthus\b|\bhence\b"
    r"|\bso\s+the\s+(?:result|answer|total)\s+is\b|\bthe\s+result\s+is\b|\bin\s+conclusion\b"
    r"|\bin\s+summary\b|答案是|因此|所以|综上|结果是|结论|总结|最终",
    re.IGNORECASE,
)
_SHORT_ANSWER_CHARS = 300
_MIN_WORDY_RATIO = 0.5


@dataclass(frozen=True)
class ParsedStep:
    """What one model reply asks for.

    Attributes:
        kind: ``"action"`` (call ``tool`` with ``args``), ``"final"`` (``answer``
            ends the run) or ``"error"`` (``error`` says what to fix).
        level: How forgiving the parse had to be: ``"exact"``, ``"fuzzy"`` or
            ``"fallback"`` (prose taken as the answer).
        thought: The model's reasoning, without labels ("" when there is none).
        tool: The tool to call; may name a tool that does not exist, which the
            runtime answers with the list of available tools.
        args: The tool's arguments, mapped onto its schema's property names.
        answer: The final answer text.
        error: A short, specific description of what was wrong.
        text: The reply as parsed, after cutting invented and trailing text.
    """

    kind: Kind
    level: Level
    thought: str
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    answer: str | None = None
    error: str | None = None
    text: str = ""


def stop_sequences(labels: Labels = ENGLISH) -> list[str]:
    """Stop strings that end generation where the model would invent an Observation.

    Pass them as the model's ``stop`` parameter; :func:`cut_invented` still cleans
    up servers that ignore it.

    Examples:
        >>> stop_sequences()
        ['\\nObservation:', 'Observation:']
    """
    stops: list[str] = []
    for observation in dict.fromkeys((labels.observation, ENGLISH.observation)):
        for colon in (":", "：") if not observation.isascii() else (":",):
            stops += [f"\n{observation}{colon}", f"{observation}{colon}"]
    return stops


def cut_invented(text: str, labels: Labels = ENGLISH) -> str:
    """``text`` without an invented Observation and without anything after the decision.

    Everything from an Observation label on is removed (the runtime writes those),
    and so is any labelled block after the first decision: after a Final Answer,
    or after the first Action and its Action Input.

    Examples:
        >>> cut_invented("Action: search\\nAction Input: {}\\nObservation: 3 hits")
        'Action: search\\nAction Input: {}'
    """
    blocks = segment(text, grammar_for(labels))
    index = cut_index(blocks)
    if index is None:
        return text
    return text[: blocks[index].start].rstrip()


def parse_step(text: str, tools: Mapping[str, dict], labels: Labels = ENGLISH) -> ParsedStep:
    """Parse one reply in the text ReAct format; never raises.

    Args:
        text: The model's reply.
        tools: Tool name to the JSON schema of its arguments (an object schema
            with ``properties`` and ``required``).
        labels: The label language the prompt asked for; English labels are
            understood in every language.

    Returns:
        The decision, how strictly it was read, and the text it was read from.

    Examples:
        >>> step = parse_step(
        ...     'Thought: add them\\nAction: calculator\\nAction Input: {"expression": "2+2"}',
        ...     {"calculator": {"properties": {"expression": {}}, "required": ["expression"]}},
        ... )
        >>> (step.kind, step.level, step.tool, step.args)
        ('action', 'exact', 'calculator', {'expression': '2+2'})
    """
    grammar = grammar_for(labels)
    cleaned = _SPECIAL_TOKEN_RE.sub("", text.replace("\r\n", "\n")).strip()
    blocks = segment(cleaned, grammar)
    labelled = len(blocks) > 1
    index = cut_index(blocks)
    invented = index is not None and blocks[index].role == "observation"
    if index is not None:
        cleaned = cleaned[: blocks[index].start].rstrip()
        blocks = blocks[:index]
    step = _decide(blocks, tools, grammar, labelled=labelled, invented=invented)
    return ParsedStep(**{**step, "text": cleaned})


# Deciding


def _decide(
    blocks: list[Block],
    tools: Mapping[str, dict],
    grammar: Grammar,
    *,
    labelled: bool,
    invented: bool,
) -> dict[str, Any]:
    """The ParsedStep fields for the blocks kept after cutting.

    ``labelled``: the reply had a label before cutting (so it is not one piece
    of prose); ``invented``: an Observation the model wrote was cut off.
    """
    thoughts: list[str] = []
    for index, block in enumerate(blocks):
        if block.role in ("preamble", "thought"):
            thoughts.append(block.content.strip())
        elif block.role == "final_answer":
            return _final_answer(block, _join(thoughts), blocks, grammar)
        elif block.role == "action" and not calls_nothing(blocks, index):
            following = blocks[index + 1 : index + 2]
            action_input = (
                following[0] if following and following[0].role == "action_input" else None
            )
            return _action(block, action_input, _join(thoughts), blocks, tools, grammar)
        elif block.role == "action_input":
            return _input_without_action(block, thoughts, tools, grammar)
    return _unlabelled(_join(thoughts), tools, grammar, labelled=labelled, invented=invented)


def _join(parts: list[str]) -> str:
    """Thought parts as one text, without code-fence markers left around them."""
    return _FENCE_EDGES_RE.sub("", "\n".join(part for part in parts if part)).strip()


def _all_exact(blocks: list[Block]) -> bool:
    return all(block.exact for block in blocks)


def _step(kind: Kind, level: Level, thought: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "level": level, "thought": thought, **fields}


def _error(error: str, thought: str, level: Level = "fuzzy") -> dict[str, Any]:
    return _step("error", level, thought, error=error)


def _final_answer(
    block: Block, thought: str, blocks: list[Block], grammar: Grammar
) -> dict[str, Any]:
    answer = block.content.strip()
    if not answer:
        return _error(message(EMPTY_FINAL, grammar), thought)
    return _step("final", _level(_all_exact(blocks)), thought, answer=answer)


def _level(exact: bool) -> Level:
    return "exact" if exact else "fuzzy"


def _action(
    block: Block,
    action_input: Block | None,
    thought: str,
    blocks: list[Block],
    tools: Mapping[str, dict],
    grammar: Grammar,
) -> dict[str, Any]:
    """An Action block (and its Action Input block, when there is one)."""
    name, inline, split_exact = split_action(block.content)
    if not name:
        return _error(message(NO_TOOL, grammar), thought)
    raw = inline if inline is not None else action_input.content if action_input else None
    if is_finish(name, tools, grammar):
        return _finish(raw, thought, grammar)
    tool = resolve_tool(name, tools, grammar)
    if tool.error:
        return _error(tool.error, thought)
    args = read_arguments(tool.value, raw, tools, grammar)
    if args.error:
        return _error(args.error, thought)
    exact = split_exact and tool.exact and args.exact and _all_exact(blocks)
    return _step("action", _level(exact), thought, tool=tool.value, args=args.value)


def _input_without_action(
    block: Block, thoughts: list[str], tools: Mapping[str, dict], grammar: Grammar
) -> dict[str, Any]:
    """An Action Input with no Action: name the tool only when nothing else could be meant.

    In order: a line just before it that is a tool name (the label was dropped),
    the only tool the thought mentions, the only tool whose schema fits the keys,
    or the only tool there is.
    """
    lines = _join(thoughts).splitlines()
    named = known_tool(split_action(lines[-1])[0], tools) if lines else None
    if named:
        lines = lines[:-1]
    tool = named or only_tool_mentioned("\n".join(lines), tools)
    value = read_input(block.content, grammar).value
    only = next(iter(tools)) if len(tools) == 1 else None
    tool = tool or only_tool_fitting(value, tools) or only
    thought = "\n".join(lines).strip()
    if tool is None:
        return _error(message(INPUT_WITHOUT_ACTION, grammar), thought)
    args = read_arguments(tool, block.content, tools, grammar)
    if args.error:
        return _error(args.error, thought)
    return _step("action", "fuzzy", thought, tool=tool, args=args.value)


def _unlabelled(
    prose: str, tools: Mapping[str, dict], grammar: Grammar, *, labelled: bool, invented: bool
) -> dict[str, Any]:
    """No decision label: look for a bare ``tool[args]`` line, else judge the prose."""
    lines = prose.splitlines()
    for position, line in enumerate(lines):
        call = CALL_RE.fullmatch(strip_wrappers(line))
        if not call:
            continue
        thought = "\n".join(lines[:position]).strip()
        name = call.group("name").strip(WRAPPER_CHARS)
        if is_finish(name, tools, grammar):
            return _finish(call.group("body"), thought, grammar)
        tool = known_tool(name, tools)
        if tool:
            args = read_arguments(tool, call.group("body"), tools, grammar)
            if args.error:
                return _error(args.error, thought)
            return _step("action", "fuzzy", thought, tool=tool, args=args.value)
    blob = _json_call(prose, tools, grammar)
    if blob is not None:
        return blob
    return _fallback(prose, grammar, labelled=labelled, invented=invented)


def _json_call(prose: str, tools: Mapping[str, dict], grammar: Grammar) -> dict[str, Any] | None:
    """A tool call written as a JSON object, e.g. ``{"action": "search", "action_input": "x"}``.

    Models trained on JSON agent formats drift into them; an object with both a
    name key and an input key can mean nothing else.
    """
    blob = first_object(remove_fences(prose))
    if blob is None:
        return None
    names = [blob[key] for key in _CALL_NAME_KEYS if isinstance(blob.get(key), str)]
    inputs = [blob[key] for key in _CALL_INPUT_KEYS if key in blob]
    if not names or not inputs or not names[0].strip():
        return None
    name, value = names[0].strip(), inputs[0]
    raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if is_finish(name, tools, grammar):
        return _finish(raw, "", grammar)
    tool = known_tool(name, tools) or name
    args = read_arguments(tool, raw, tools, grammar)
    if args.error:
        return _error(args.error, "")
    return _step("action", "fuzzy", "", tool=tool, args=args.value)


def _fallback(prose: str, grammar: Grammar, *, labelled: bool, invented: bool) -> dict[str, Any]:
    """Take prose as the final answer only when it reads as one.

    Signs of unfinished work ("I need to", "let me", a trailing colon) rule it out;
    a conclusion ("the answer is", "therefore") rules it in; otherwise a whole
    unlabelled reply, or a short thought, counts as an answer. Prose that stopped
    at an invented Observation needs a conclusion: it was waiting for a result.
    """
    concluded = _CONCLUSION_RE.search(prose) is not None
    if invented and not (concluded and _is_wordy(prose)):
        return _error(message(INVENTED_OBSERVATION, grammar), prose)
    if not prose:
        return _error(message(NO_DECISION if labelled else EMPTY_REPLY, grammar), "")
    if _UNFINISHED_RE.search(prose):
        return _error(message(NO_DECISION, grammar), prose, "fallback")
    reads_as_answer = concluded or not labelled or len(prose) <= _SHORT_ANSWER_CHARS
    if reads_as_answer and _is_wordy(prose):
        return _step("final", "fallback", "", answer=prose)
    return _error(message(NOT_AN_ANSWER, grammar), prose, "fallback")


def _is_wordy(text: str) -> bool:
    """Mostly letters and digits: prose or a value, not stray punctuation."""
    visible = [char for char in text if not char.isspace()]
    wordy = sum(char.isalnum() for char in visible)
    return wordy > 0 and wordy >= _MIN_WORDY_RATIO * len(visible)


def _finish(raw: str | None, thought: str, grammar: Grammar) -> dict[str, Any]:
    """``Finish[answer]``, ``finish(answer)`` or an Action named after the Final Answer."""
    answer = _answer_text(raw or "")
    if not answer:
        return _error(message(EMPTY_FINAL, grammar), thought)
    return _step("final", "fuzzy", thought, answer=answer)


def _answer_text(raw: str) -> str:
    """The answer inside a finish call: a JSON string or one-field object unwrapped."""
    text = remove_fences(raw).strip()
    try:
        value = json.loads(text)
    except ValueError:
        return unwrap(text)
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    return value.strip() if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
