"""Reading the almost-JSON that models write as tool arguments.

Models asked for a JSON object often give Python-style dicts (single quotes,
``True``/``None``), unquoted keys or values, trailing commas, fullwidth
punctuation, a Markdown code fence, prose around the object, or an object cut
short by a stop sequence. Each repair here works outside string literals only, so
the text inside a value is never changed.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE_RE = re.compile(r"```[\w+-]*")
_QUOTE_PAIRS = {'"': '"', "'": "'", "“": "”"}
_CLOSERS = {"{": "}", "[": "]"}
_FULLWIDTH = str.maketrans({"：": ":", "，": ",", "｛": "{", "｝": "}", "［": "[", "］": "]"})
_PY_LITERALS_RE = re.compile(r"\b(True|False|None)\b")
_PY_TO_JSON = {"True": "true", "False": "false", "None": "null"}
_BARE_KEY_RE = re.compile(r"([{,]\s*)([\w$-]+)(\s*:)")
_BARE_VALUE_RE = re.compile(r"(:\s*)([^\s,{}\[\]:][^,{}\[\]:]*?)(\s*)(?=[,}\]])")
_TRAILING_COMMA_RE = re.compile(r",(\s*[}\]])")
_PAIR_KEY_RE = re.compile(r"(?:^|,)\s*([A-Za-z_][\w-]*)\s*=(?!=)\s*")
_MAX_OBJECT_STARTS = 20


def remove_fences(text: str) -> str:
    """``text`` without Markdown code-fence markers (```` ```json ```` and ```` ``` ````).

    Dropping the markers rather than taking a fence's content also reads a fence
    left open by a stop sequence, or one that wraps more than the value.
    """
    return _FENCE_RE.sub("", text)


def first_object(text: str) -> dict[str, Any] | None:
    """The first ``{...}`` in ``text`` that reads as a JSON object after repair.

    Examples:
        >>> first_object("I will use {query: 'Paris', k: 3,} now")
        {'query': 'Paris', 'k': 3}
    """
    start = text.find("{")
    for _ in range(_MAX_OBJECT_STARTS):
        if start < 0:
            return None
        value = load_object(_balanced_span(text, start))
        if value is not None:
            return value
        start = text.find("{", start + 1)
    return None


def load_object(text: str) -> dict[str, Any] | None:
    """``text`` as a JSON object, strict first, then repaired; ``None`` if neither reads."""
    for candidate in (text, _repair(text)):
        try:
            value = json.loads(candidate, strict=False)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def parse_pairs(text: str) -> dict[str, Any] | None:
    """``key=value, key2="quoted"`` as a dict, or ``None`` when ``text`` is not that shape.

    Unquoted values that read as JSON scalars (numbers, ``true``) become them.

    Examples:
        >>> parse_pairs('query="capital of France", k=2')
        {'query': 'capital of France', 'k': 2}
    """
    keys = list(_PAIR_KEY_RE.finditer(text))
    if not keys or keys[0].start() != 0:
        return None
    pairs: dict[str, Any] = {}
    for match, following in zip(keys, [*keys[1:], None], strict=True):
        end = following.start() if following else len(text)
        pairs[match.group(1)] = _scalar(text[match.end() : end].strip())
    return pairs


def _scalar(value: str) -> Any:
    """A quoted value unquoted, a JSON scalar decoded, anything else kept as text."""
    if len(value) >= 2 and value[0] in _QUOTE_PAIRS and value[-1] == _QUOTE_PAIRS[value[0]]:
        return value[1:-1]
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    return decoded if isinstance(decoded, (int, float, bool)) else value


def _balanced_span(text: str, start: int) -> str:
    """From ``start`` to its matching brace; an unclosed object is closed at the end."""
    stack: list[str] = []
    position = start
    while position < len(text):
        char = text[position]
        if char in _QUOTE_PAIRS:
            position = _string_end(text, position)
            if position >= len(text):
                return text[start:] + char + _closing(stack)
        elif char in _CLOSERS:
            stack.append(char)
        elif char in "}]" and stack:
            stack.pop()
            if not stack:
                return text[start : position + 1]
        position += 1
    return text[start:] + _closing(stack)


def _closing(stack: list[str]) -> str:
    return "".join(_CLOSERS[opener] for opener in reversed(stack))


def _string_end(text: str, start: int) -> int:
    """Index of the quote closing the string opened at ``start`` (``len(text)`` if none)."""
    closer = _QUOTE_PAIRS[text[start]]
    position = start + 1
    while position < len(text):
        if text[position] == "\\":
            position += 2
            continue
        if text[position] == closer:
            return position
        position += 1
    return len(text)


def _repair(text: str) -> str:
    """Rewrite strings as JSON strings and fix the code between them."""
    out: list[str] = []
    code_start = 0
    position = 0
    while position < len(text):
        if text[position] not in _QUOTE_PAIRS:
            position += 1
            continue
        out.append(_repair_code(text[code_start:position]))
        end = _string_end(text, position)
        out.append(_json_string(text[position + 1 : end], text[position]))
        position = code_start = end + 1
    out.append(_repair_code(text[code_start:]))
    return "".join(out)


def _json_string(body: str, quote: str) -> str:
    """A string body written between ``quote`` marks, as a JSON string literal."""
    if quote == '"':
        return f'"{body}"'
    return '"' + body.replace("\\'", "'").replace('"', '\\"') + '"'


def _repair_code(code: str) -> str:
    """Fix the non-string parts: punctuation, Python literals, bare words, trailing commas."""
    code = code.translate(_FULLWIDTH)
    code = _PY_LITERALS_RE.sub(lambda match: _PY_TO_JSON[match.group(1)], code)
    code = _BARE_KEY_RE.sub(r'\1"\2"\3', code)
    code = _BARE_VALUE_RE.sub(_quote_bare_value, code)
    return _TRAILING_COMMA_RE.sub(r"\1", code)


def _quote_bare_value(match: re.Match[str]) -> str:
    """Quote an unquoted value unless it already reads as a JSON scalar."""
    value = match.group(2)
    try:
        json.loads(value)
    except ValueError:
        value = json.dumps(value, ensure_ascii=False)
    return match.group(1) + value + match.group(3)
