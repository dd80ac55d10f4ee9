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
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from reasoning_graphs.text_format.json_repair import (
    first_object,
    parse_pairs,
    remove_fences,
)
from reasoning_graphs.text_format.labels import ENGLISH, Labels

EMPTY_REPLY = "The reply is empty."
NO_DECISION = "No {action} or {final_answer} found; the reply looks unfinished."
INVENTED_OBSERVATION = (
    "You wrote an {observation} yourself and no {action} before it; write one {action} "
    "and {action_input}, then stop: the system adds the {observation}."
)
NOT_AN_ANSWER = "No {action} or {final_answer} found, and the text does not read as an answer."
EMPTY_FINAL = "{final_answer} is empty."
NO_TOOL = "{action} names no tool."
NOT_A_TOOL_NAME = "{action} must be only the tool name, but it reads {text!r}."
INPUT_WITHOUT_ACTION = "{action_input} given, but no {action} line names the tool."
NEEDS_OBJECT = "{action_input} for {tool!r} must be a JSON object with the keys: {keys}."
TAKES_NO_ARGUMENTS = "{tool!r} takes no arguments; write {action_input}: {{}}."
BAD_JSON = "{action_input} is not a readable JSON object: {text!r}."

RAW_INPUT_KEY = "input"
"""Where a bare-string input goes when the tool is unknown and has no schema to map it to."""

Kind = Literal["action", "final", "error"]
Level = Literal["exact", "fuzzy", "fallback"]
Role = Literal["preamble", "thought", "action", "action_input", "observation", "final_answer"]

_ROLES: tuple[Role, ...] = ("thought", "action", "action_input", "observation", "final_answer")
_EXTRA_ALIASES: dict[Role, tuple[str, ...]] = {"action": ("Act",)}
_FINISH_NAMES = frozenset({"finish", "answer"})
_NO_ACTION_NAMES = frozenset({"none", "n/a", "na", "null", "nothing", "no action", "无", "没有"})
_SPECIAL_TOKEN_RE = re.compile(r"<\|[\w.-]{1,40}\|>(?:(?:system|user|assistant)\b)?|</?s>")
_FENCE_EDGES_RE = re.compile(r"\A\s*```[\w+-]*|```[\w+-]*\s*\Z")
_LINE_PREFIX_RE = re.compile(r"[ \t]*(?:(?:#{1,6}|>|[-*+]|\d{1,2}[.)])[ \t]*)?")
_INLINE_BEFORE = " \t。，；！？、.,;!?)"
_WRAPPER_CHARS = "`'\"*“”‘’「」 \t"
_CALL_RE = re.compile(
    r"(?P<name>[^\s\[\](){}（）【】:：,]+?)\s*(?P<open>[\[(（【])(?P<body>.*)[\])）】]\s*[.。]?",
    re.DOTALL,
)
_NAME_WITH_OBJECT_RE = re.compile(r"(?P<name>[^\s{:：,]+)\s*[:：,]?\s*(?P<body>\{.*)", re.DOTALL)
_NAME_COLON_INPUT_RE = re.compile(r"(?P<name>[\w.-]+)\s*[:：]\s*(?P<body>\S.*)", re.DOTALL)
_INLINE_INPUT_RES = (_CALL_RE, _NAME_WITH_OBJECT_RE, _NAME_COLON_INPUT_RE)
_TOOL_NAME_RE = re.compile(r"[\w.\-/ ]{1,64}")
_WORD_RE = re.compile(r"[\w.-]+")
_PAIRED = {"`": "`", "'": "'", '"': '"', "“": "”", "‘": "’", "「": "」", "*": "*"}
_INPUT_START = ("{", "[", '"', "'", "`", "“")
_MAX_NAME_WORDS = 3
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
    r"|\bin\s+summary\b|答案是|因此|所以|综上|结果是",
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


@dataclass(frozen=True)
class _Block:
    """One labelled part of a reply; ``start`` is where cutting before it begins."""

    role: Role
    start: int
    content: str
    exact: bool


@dataclass(frozen=True)
class _Label:
    """A label that starts a block: cutting begins at ``start``, its text at ``content_start``."""

    role: Role
    start: int
    content_start: int
    exact: bool


@dataclass(frozen=True)
class _Grammar:
    """The compiled label pattern of one :class:`Labels`, with what each name means."""

    pattern: re.Pattern[str]
    roles: dict[str, Role]
    spellings: frozenset[str]
    canonical: frozenset[str]
    labels: Labels


@dataclass(frozen=True)
class _Outcome:
    """A partial result: ``value`` read with ``exact`` strictness, or an ``error``."""

    value: Any = None
    exact: bool = True
    error: str | None = None


def stop_sequences(labels: Labels = ENGLISH) -> list[str]:
    """Stop strings that end generation where the model would invent an Observation.

    Pass them as the model's ``stop`` parameter; :func:`cut_invented` still cleans
    up servers that ignore it.

    Example:
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

    Example:
        >>> cut_invented("Action: search\\nAction Input: {}\\nObservation: 3 hits")
        'Action: search\\nAction Input: {}'
    """
    blocks = _segment(text, _grammar(labels))
    index = _cut_index(blocks)
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

    Example:
        >>> step = parse_step(
        ...     'Thought: add them\\nAction: calculator\\nAction Input: {"expression": "2+2"}',
        ...     {"calculator": {"properties": {"expression": {}}, "required": ["expression"]}},
        ... )
        >>> (step.kind, step.level, step.tool, step.args)
        ('action', 'exact', 'calculator', {'expression': '2+2'})
    """
    grammar = _grammar(labels)
    cleaned = _SPECIAL_TOKEN_RE.sub("", text.replace("\r\n", "\n")).strip()
    blocks = _segment(cleaned, grammar)
    labelled = len(blocks) > 1
    index = _cut_index(blocks)
    invented = index is not None and blocks[index].role == "observation"
    if index is not None:
        cleaned = cleaned[: blocks[index].start].rstrip()
        blocks = blocks[:index]
    step = _decide(blocks, tools, grammar, labelled=labelled, invented=invented)
    return ParsedStep(**{**step, "text": cleaned})


# Labels and blocks


@lru_cache(maxsize=16)
def _grammar(labels: Labels) -> _Grammar:
    """Compile one pattern matching every label (and English and alias spellings)."""
    roles: dict[str, Role] = {}
    spellings: set[str] = set()
    for role in _ROLES:
        for alias in (getattr(labels, role), getattr(ENGLISH, role), *_EXTRA_ALIASES.get(role, ())):
            roles.setdefault(_label_key(alias), role)
            spellings |= {alias, alias.upper()}
    names = sorted(roles, key=len, reverse=True)
    alternatives = "|".join(r"[ \t_-]*".join(map(re.escape, name.split())) for name in names)
    pattern = re.compile(
        rf"(?<!\w)(?P<bold>\*{{1,2}}|_{{1,2}})?(?P<name>{alternatives})(?![A-Za-z])"
        r"(?P<num>[ \t]*\d{1,3}(?!\d))?[ \t]*(?P<bold2>\*{1,2}|_{1,2})?[ \t]*"
        r"(?P<colon>[:：])?(?:[ \t]*(?:\*{1,2}|_{1,2}))?[ \t]*",
        re.IGNORECASE,
    )
    canonical = frozenset(getattr(labels, role) for role in _ROLES)
    return _Grammar(pattern, roles, frozenset(spellings), canonical, labels)


def _label_key(name: str) -> str:
    """A label spelling reduced to lower-case words separated by single spaces."""
    return " ".join(re.split(r"[\s_-]+", name.strip().lower()))


def _segment(text: str, grammar: _Grammar) -> list[_Block]:
    """Split ``text`` into a preamble and one block per accepted label."""
    found = _labels_in(text, grammar)
    starts = [label.start for label in found] + [len(text)]
    blocks = [_Block("preamble", 0, text[: starts[0]], True)]
    for label, end in zip(found, starts[1:], strict=True):
        blocks.append(_Block(label.role, label.start, text[label.content_start : end], label.exact))
    return blocks


def _labels_in(text: str, grammar: _Grammar) -> list[_Label]:
    """Each label occurrence that really starts a block."""
    matches = list(grammar.pattern.finditer(text))
    inline = [match.start() for match in matches if _inline_label(text, match, grammar)]
    found: list[_Label] = []
    for match in matches:
        role = grammar.roles[_label_key(match.group("name"))]
        exact = _label_is_exact(text, match, grammar)
        line_start = text.rfind("\n", 0, match.start()) + 1
        prefix = _LINE_PREFIX_RE.fullmatch(text, line_start, match.start())
        if prefix and _stands_alone(_rest_of_line(text, match.end(), inline), match, role):
            found.append(_Label(role, line_start, match.end(), exact))
        elif match.start() in inline:
            found.append(_Label(role, match.start(), match.end(), exact))
    return found


def _rest_of_line(text: str, position: int, inline: list[int]) -> str:
    """The text after a label up to the line end or the next inline label."""
    line_end = text.find("\n", position)
    end = line_end if line_end >= 0 else len(text)
    following = inline[bisect.bisect_left(inline, position) :]
    return text[position : min([end, *following[:1]])].strip()


def _stands_alone(rest: str, match: re.Match[str], role: Role) -> bool:
    """A line-start label; without a colon only where prose cannot be meant.

    ``Action calculator`` (one word after it), ``Action Input {...}`` and a label
    alone on its line are labels; ``Action items are due`` is prose.
    """
    if match.group("colon") or not rest:
        return True
    if role == "action":
        return len(rest.split()) == 1
    return role == "action_input" and rest.startswith(_INPUT_START)


def _inline_label(text: str, match: re.Match[str], grammar: _Grammar) -> bool:
    """A label inside a line (``Thought: add. Action: calculator``): canonical case and colon."""
    return (
        " ".join(match.group("name").split()) in grammar.spellings
        and match.group("colon") is not None
        and match.start() > 0
        and text[match.start() - 1] in _INLINE_BEFORE
    )


def _label_is_exact(text: str, match: re.Match[str], grammar: _Grammar) -> bool:
    """Written as the prompt shows: line start, canonical spelling, a plain colon."""
    name, colon = match.group("name"), match.group("colon")
    native_colon = colon == ":" or (colon == "：" and not name.isascii())
    line_start = text.rfind("\n", 0, match.start()) + 1
    return (
        match.start() == line_start
        and match.end("name") == match.start("colon")
        and name in grammar.canonical
        and native_colon
        and not (match.group("bold") or match.group("bold2") or match.group("num"))
    )


def _cut_index(blocks: list[_Block]) -> int | None:
    """Index of the first block the model was not entitled to write, if any."""
    state = "open"
    for index, block in enumerate(blocks):
        if block.role == "observation" or state == "closed":
            return index
        if state == "action":
            if block.role != "action_input":
                return index
            state = "closed"
        elif block.role in ("final_answer", "action_input"):
            state = "closed"
        elif block.role == "action" and not _calls_nothing(blocks, index):
            state = "action"
    return None


def _calls_nothing(blocks: list[_Block], index: int) -> bool:
    """Whether the Action at ``index`` means no call at all.

    That is ``Action: None`` and the like, or an empty Action right before a Final
    Answer, as in ``Action: Final Answer: 42``.
    """
    name = _strip_wrappers(blocks[index].content).lower().rstrip(".。")
    following = blocks[index + 1 : index + 2]
    return name in _NO_ACTION_NAMES or (
        not name and bool(following) and following[0].role == "final_answer"
    )


# Deciding


def _decide(
    blocks: list[_Block],
    tools: Mapping[str, dict],
    grammar: _Grammar,
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
        elif block.role == "action" and not _calls_nothing(blocks, index):
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


def _all_exact(blocks: list[_Block]) -> bool:
    return all(block.exact for block in blocks)


def _step(kind: Kind, level: Level, thought: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "level": level, "thought": thought, **fields}


def _error(message: str, thought: str, level: Level = "fuzzy") -> dict[str, Any]:
    return _step("error", level, thought, error=message)


def _final_answer(
    block: _Block, thought: str, blocks: list[_Block], grammar: _Grammar
) -> dict[str, Any]:
    answer = block.content.strip()
    if not answer:
        return _error(_message(EMPTY_FINAL, grammar), thought)
    return _step("final", _level(_all_exact(blocks)), thought, answer=answer)


def _level(exact: bool) -> Level:
    return "exact" if exact else "fuzzy"


def _action(
    block: _Block,
    action_input: _Block | None,
    thought: str,
    blocks: list[_Block],
    tools: Mapping[str, dict],
    grammar: _Grammar,
) -> dict[str, Any]:
    """An Action block (and its Action Input block, when there is one)."""
    name, inline, split_exact = _split_action(block.content)
    if not name:
        return _error(_message(NO_TOOL, grammar), thought)
    raw = inline if inline is not None else action_input.content if action_input else None
    if _is_finish(name, tools, grammar):
        return _finish(raw, thought, grammar)
    tool = _resolve_tool(name, tools, grammar)
    if tool.error:
        return _error(tool.error, thought)
    args = _arguments(tool.value, raw, tools, grammar)
    if args.error:
        return _error(args.error, thought)
    exact = split_exact and tool.exact and args.exact and _all_exact(blocks)
    return _step("action", _level(exact), thought, tool=tool.value, args=args.value)


def _input_without_action(
    block: _Block, thoughts: list[str], tools: Mapping[str, dict], grammar: _Grammar
) -> dict[str, Any]:
    """An Action Input with no Action: name the tool only when nothing else could be meant.

    In order: a line just before it that is a tool name (the label was dropped),
    the only tool the thought mentions, the only tool whose schema fits the keys,
    or the only tool there is.
    """
    lines = _join(thoughts).splitlines()
    named = _known_tool(_split_action(lines[-1])[0], tools) if lines else None
    if named:
        lines = lines[:-1]
    tool = named or _only_tool_mentioned("\n".join(lines), tools)
    value = _read_input(block.content, grammar).value
    only = next(iter(tools)) if len(tools) == 1 else None
    tool = tool or _only_tool_fitting(value, tools) or only
    thought = "\n".join(lines).strip()
    if tool is None:
        return _error(_message(INPUT_WITHOUT_ACTION, grammar), thought)
    args = _arguments(tool, block.content, tools, grammar)
    if args.error:
        return _error(args.error, thought)
    return _step("action", "fuzzy", thought, tool=tool, args=args.value)


def _unlabelled(
    prose: str, tools: Mapping[str, dict], grammar: _Grammar, *, labelled: bool, invented: bool
) -> dict[str, Any]:
    """No decision label: look for a bare ``tool[args]`` line, else judge the prose."""
    lines = prose.splitlines()
    for position, line in enumerate(lines):
        call = _CALL_RE.fullmatch(_strip_wrappers(line))
        if not call:
            continue
        thought = "\n".join(lines[:position]).strip()
        name = call.group("name").strip(_WRAPPER_CHARS)
        if _is_finish(name, tools, grammar):
            return _finish(call.group("body"), thought, grammar)
        tool = _known_tool(name, tools)
        if tool:
            args = _arguments(tool, call.group("body"), tools, grammar)
            if args.error:
                return _error(args.error, thought)
            return _step("action", "fuzzy", thought, tool=tool, args=args.value)
    blob = _json_call(prose, tools, grammar)
    if blob is not None:
        return blob
    return _fallback(prose, grammar, labelled=labelled, invented=invented)


def _json_call(prose: str, tools: Mapping[str, dict], grammar: _Grammar) -> dict[str, Any] | None:
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
    if _is_finish(name, tools, grammar):
        return _finish(raw, "", grammar)
    tool = _known_tool(name, tools) or name
    args = _arguments(tool, raw, tools, grammar)
    if args.error:
        return _error(args.error, "")
    return _step("action", "fuzzy", "", tool=tool, args=args.value)


def _fallback(prose: str, grammar: _Grammar, *, labelled: bool, invented: bool) -> dict[str, Any]:
    """Take prose as the final answer only when it reads as one.

    Signs of unfinished work ("I need to", "let me", a trailing colon) rule it out;
    a conclusion ("the answer is", "therefore") rules it in; otherwise a whole
    unlabelled reply, or a short thought, counts as an answer. Prose that stopped
    at an invented Observation needs a conclusion: it was waiting for a result.
    """
    concluded = _CONCLUSION_RE.search(prose) is not None
    if invented and not (concluded and _is_wordy(prose)):
        return _error(_message(INVENTED_OBSERVATION, grammar), prose)
    if not prose:
        return _error(_message(NO_DECISION if labelled else EMPTY_REPLY, grammar), "")
    if _UNFINISHED_RE.search(prose):
        return _error(_message(NO_DECISION, grammar), prose, "fallback")
    reads_as_answer = concluded or not labelled or len(prose) <= _SHORT_ANSWER_CHARS
    if reads_as_answer and _is_wordy(prose):
        return _step("final", "fallback", "", answer=prose)
    return _error(_message(NOT_AN_ANSWER, grammar), prose, "fallback")


def _is_wordy(text: str) -> bool:
    """Mostly letters and digits: prose or a value, not stray punctuation."""
    visible = [char for char in text if not char.isspace()]
    wordy = sum(char.isalnum() for char in visible)
    return wordy > 0 and wordy >= _MIN_WORDY_RATIO * len(visible)


def _finish(raw: str | None, thought: str, grammar: _Grammar) -> dict[str, Any]:
    """``Finish[answer]``, ``finish(answer)`` or an Action named after the Final Answer."""
    answer = _answer_text(raw or "")
    if not answer:
        return _error(_message(EMPTY_FINAL, grammar), thought)
    return _step("final", "fuzzy", thought, answer=answer)


def _answer_text(raw: str) -> str:
    """The answer inside a finish call: a JSON string or one-field object unwrapped."""
    text = remove_fences(raw).strip()
    try:
        value = json.loads(text)
    except ValueError:
        return _unwrap(text)
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    return value.strip() if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# Tool names


def _strip_wrappers(text: str) -> str:
    """Without surrounding quotes, backticks and Markdown emphasis."""
    return text.strip().strip(_WRAPPER_CHARS)


def _split_action(content: str) -> tuple[str, str | None, bool]:
    """Tool name, arguments written on the Action line itself (if any), and exactness.

    Reads ``calculator``, ``calculator[2+2]``, ``calculator(expression="2+2")``,
    ``calculator {"expression": "2+2"}``, ``calculator: 2+2``, and a JSON input
    put on the next line.
    """
    head, _, rest = content.strip().partition("\n")
    name = _strip_wrappers(head)
    exact = name == head.strip()
    inline: str | None = None
    call = next((match for regex in _INLINE_INPUT_RES if (match := regex.fullmatch(name))), None)
    if call:
        name, inline, exact = call.group("name"), call.group("body"), False
    elif rest.strip().startswith(_INPUT_START):
        inline, exact = rest, False
    cleaned = _strip_wrappers(name).rstrip(".。:：")
    return cleaned, inline, exact and cleaned == name


def _name_key(name: str) -> str:
    """A tool or argument name compared loosely: case, quotes, spaces and dashes ignored."""
    return re.sub(r"[\s-]+", "_", _strip_wrappers(name).lower())


def _known_tool(name: str, tools: Mapping[str, dict]) -> str | None:
    """The real tool ``name`` means, ignoring case, quotes and separators, if unique."""
    if name in tools:
        return name
    matches = [tool for tool in tools if _name_key(tool) == _name_key(name)]
    return matches[0] if len(matches) == 1 else None


def _resolve_tool(name: str, tools: Mapping[str, dict], grammar: _Grammar) -> _Outcome:
    """The tool an Action names; an unknown but name-like value passes through."""
    if name in tools:
        return _Outcome(name)
    known = _known_tool(name, tools) or _only_tool_mentioned(name, tools)
    if known:
        return _Outcome(known, exact=False)
    if _TOOL_NAME_RE.fullmatch(name) and len(name.split()) <= _MAX_NAME_WORDS:
        return _Outcome(name, exact=len(name.split()) == 1)
    return _Outcome(error=_message(NOT_A_TOOL_NAME, grammar, text=name[:80]))


def _only_tool_mentioned(text: str, tools: Mapping[str, dict]) -> str | None:
    """The one tool whose name appears as a word in ``text``."""
    words = {_name_key(word) for word in _WORD_RE.findall(text)}
    mentioned = [tool for tool in tools if _name_key(tool) in words]
    return mentioned[0] if len(mentioned) == 1 else None


def _only_tool_fitting(value: Any, tools: Mapping[str, dict]) -> str | None:
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


def _is_finish(name: str, tools: Mapping[str, dict], grammar: _Grammar) -> bool:
    """A finish pseudo-tool (``Finish``, ``Final Answer``) unless a real tool has that name."""
    if _known_tool(name, tools):
        return False
    key = _name_key(name)
    return key in _FINISH_NAMES or grammar.roles.get(_label_key(name)) == "final_answer"


# Arguments


def _read_input(raw: str, grammar: _Grammar) -> _Outcome:
    """The value of an Action Input: a dict when it holds an object, else a bare value."""
    text = raw.strip()
    if not text:
        return _Outcome(None)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        return _Outcome(value)
    if isinstance(value, (str, int, float, bool, list)):
        return _Outcome(value, exact=False)
    body = remove_fences(text).strip()
    found = first_object(body)
    if found is not None:
        return _Outcome(found, exact=False)
    if body.startswith("{"):
        return _Outcome(error=_message(BAD_JSON, grammar, text=body[:80]))
    return _Outcome(_bare(body), exact=False)


def _bare(text: str) -> Any:
    """A non-object input: a JSON scalar or list decoded, else the text unwrapped."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _unwrap(text)


def _unwrap(text: str) -> str:
    """Remove matching pairs of quotes, backticks or emphasis around ``text``."""
    text = text.strip()
    while len(text) >= 2 and _PAIRED.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return text


def _arguments(
    tool: str, raw: str | None, tools: Mapping[str, dict], grammar: _Grammar
) -> _Outcome:
    """``raw`` read and mapped onto ``tool``'s schema."""
    read = _read_input(raw or "", grammar)
    if read.error:
        return read
    fitted = _fit(tool, read.value, tools.get(tool), grammar)
    exact = read.exact and fitted.exact and bool(raw and raw.strip())
    return _Outcome(fitted.value, exact, fitted.error)


def _fit(tool: str, value: Any, schema: dict | None, grammar: _Grammar) -> _Outcome:
    """Map a read value onto the schema's properties.

    A dict keeps its values, with keys renamed to the property they mean; a bare
    value goes to the tool's single argument. Types are left to the runtime.
    """
    if value is None or value == "":
        return _Outcome({})
    if schema is None:
        return _Outcome(value if isinstance(value, dict) else {RAW_INPUT_KEY: value})
    properties, required = _properties(schema), _required(schema)
    if isinstance(value, str):
        pairs = parse_pairs(value)
        if pairs and all(_property_for(key, properties) for key in pairs):
            value = pairs
    if isinstance(value, dict):
        return _match_keys(value, properties, required)
    target = _single_argument(properties, required)
    if target:
        return _Outcome({target: value}, exact=False)
    keys = ", ".join(required or properties)
    template = NEEDS_OBJECT if properties else TAKES_NO_ARGUMENTS
    return _Outcome(error=_message(template, grammar, tool=tool, keys=keys))


def _match_keys(value: dict, properties: dict[str, Any], required: list[str]) -> _Outcome:
    """Rename keys to the properties they mean; one stray key goes to a lone argument."""
    args = {str(key): item for key, item in value.items()}
    renamed = {_property_for(key, properties) or key: item for key, item in args.items()}
    target = _single_argument(properties, required)
    if len(renamed) == 1 and target and not set(renamed) & set(properties):
        renamed = {target: next(iter(renamed.values()))}
    return _Outcome(renamed, exact=renamed == args)


def _property_for(key: str, properties: Mapping[str, Any]) -> str | None:
    """The property ``key`` names, ignoring case, spaces and dashes."""
    if key in properties:
        return key
    matches = [name for name in properties if _name_key(name) == _name_key(key)]
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


def _message(template: str, grammar: _Grammar, **values: Any) -> str:
    """A message template filled with this language's label text."""
    labels = grammar.labels
    return template.format(
        action=labels.action,
        action_input=labels.action_input,
        observation=labels.observation,
        final_answer=labels.final_answer,
        **values,
    )
