"""Finding the labels in a reply, splitting it into blocks, and where to cut it.

Deciding what a reply means needs it as a list of labelled blocks first. Which
text is a label is the subtle part: labels may be bold, numbered, spaced oddly,
written without a colon or in the middle of a line, while prose such as
``Action items are due`` must stay prose. This module owns that judgement, the
compiled label pattern of each language, and the rule for which blocks the model
was not entitled to write.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from reasoning_graphs.text_format.labels import ENGLISH, Labels

Role = Literal["preamble", "thought", "action", "action_input", "observation", "final_answer"]

WRAPPER_CHARS = "`'\"*“”‘’「」 \t"
"""Quotes, backticks and emphasis that models put around names and values."""
INPUT_START = ("{", "[", '"', "'", "`", "“")
"""How an Action Input can start when it follows a name without a label."""

_ROLES: tuple[Role, ...] = ("thought", "action", "action_input", "observation", "final_answer")
_EXTRA_ALIASES: dict[Role, tuple[str, ...]] = {"action": ("Act",)}
_NO_ACTION_NAMES = frozenset({"none", "n/a", "na", "null", "nothing", "no action", "无", "没有"})
_LINE_PREFIX_RE = re.compile(r"[ \t]*(?:(?:#{1,6}|>|[-*+]|\d{1,2}[.)])[ \t]*)?")
_INLINE_BEFORE = " \t。，；！？、.,;!?)"


@dataclass(frozen=True)
class Block:
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
class Grammar:
    """The compiled label pattern of one :class:`Labels`, with what each name means."""

    pattern: re.Pattern[str]
    roles: dict[str, Role]
    spellings: frozenset[str]
    canonical: frozenset[str]
    labels: Labels


@lru_cache(maxsize=16)
def grammar_for(labels: Labels) -> Grammar:
    """Compile one pattern matching every label (and English and alias spellings)."""
    roles: dict[str, Role] = {}
    spellings: set[str] = set()
    for role in _ROLES:
        for alias in (getattr(labels, role), getattr(ENGLISH, role), *_EXTRA_ALIASES.get(role, ())):
            roles.setdefault(label_key(alias), role)
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
    return Grammar(pattern, roles, frozenset(spellings), canonical, labels)


def message(template: str, grammar: Grammar, **values: Any) -> str:
    """A message template filled with this language's label text."""
    labels = grammar.labels
    return template.format(
        action=labels.action,
        action_input=labels.action_input,
        observation=labels.observation,
        final_answer=labels.final_answer,
        **values,
    )


def label_key(name: str) -> str:
    """A label spelling reduced to lower-case words separated by single spaces."""
    return " ".join(re.split(r"[\s_-]+", name.strip().lower()))


def strip_wrappers(text: str) -> str:
    """Without surrounding quotes, backticks and Markdown emphasis."""
    return text.strip().strip(WRAPPER_CHARS)


def segment(text: str, grammar: Grammar) -> list[Block]:
    """Split ``text`` into a preamble and one block per accepted label."""
    found = _labels_in(text, grammar)
    starts = [label.start for label in found] + [len(text)]
    blocks = [Block("preamble", 0, text[: starts[0]], True)]
    for label, end in zip(found, starts[1:], strict=True):
        blocks.append(Block(label.role, label.start, text[label.content_start : end], label.exact))
    return blocks


def _labels_in(text: str, grammar: Grammar) -> list[_Label]:
    """Each label occurrence that really starts a block."""
    matches = list(grammar.pattern.finditer(text))
    inline = [match.start() for match in matches if _inline_label(text, match, grammar)]
    found: list[_Label] = []
    for match in matches:
        role = grammar.roles[label_key(match.group("name"))]
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
    return role == "action_input" and rest.startswith(INPUT_START)


def _inline_label(text: str, match: re.Match[str], grammar: Grammar) -> bool:
    """A label inside a line (``Thought: add. Action: calculator``): canonical case and colon."""
    return (
        " ".join(match.group("name").split()) in grammar.spellings
        and match.group("colon") is not None
        and match.start() > 0
        and text[match.start() - 1] in _INLINE_BEFORE
    )


def _label_is_exact(text: str, match: re.Match[str], grammar: Grammar) -> bool:
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


def cut_index(blocks: list[Block]) -> int | None:
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
        elif block.role == "action" and not calls_nothing(blocks, index):
            state = "action"
    return None


def calls_nothing(blocks: list[Block], index: int) -> bool:
    """Whether the Action at ``index`` means no call at all.

    That is ``Action: None`` and the like, or an empty Action right before a Final
    Answer, as in ``Action: Final Answer: 42``.
    """
    name = strip_wrappers(blocks[index].content).lower().rstrip(".。")
    following = blocks[index + 1 : index + 2]
    return name in _NO_ACTION_NAMES or (
        not name and bool(following) and following[0].role == "final_answer"
    )
