"""Where a reply copies texts: runs of their words, templates with their fields filled.

A model that gives back what it was told rarely does so character for
character: it drops a bracket, changes a word, fills a template's fields with
the values of its run. A :class:`TextIndex` finds the words of a reply copied
from its texts, compared as a reader sees them
(:func:`~reasoning_graphs.nodes.grounding.plain_text.plain`): runs of :data:`RUN_WORDS`
words in the order a text has them; a template (a text with fields such as
``{reason}``) with its fields filled in; a word or two changed between copied
words. :meth:`TextIndex.copies` tells whether a reply says nothing else.

Examples:
    >>> index = TextIndex()
    >>> index.add("Not run: the reviewer rejected this call. Reason: {reason}")
    >>> reply = "not run: the reviewer rejected this call. reason: unsafe"
    >>> index.copies(reply, 0, len(reply))
    True
    >>> reply += ". so the total is 395."
    >>> index.copies(reply, 0, len(reply))
    False
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from reasoning_graphs.nodes.grounding.plain_text import plain

RUN_WORDS = 4
"""Words in a row that count as copied when a text has them in that order."""
COPIED_WORDS = 5
"""Copied words a reply needs to be a copy (a CJK character counts as half a word):
fewer may be a coincidence (``at the same time``, ``没有可用的工具``), unless the reply
is the whole of a short text."""
EDIT_WORDS = 2
"""Words without digits, between copied ones, that count as an edit of the copy."""
TEMPLATE_WORDS = 3
"""Words of its own a template needs before a reply filling its fields counts as a copy."""
FIELD_CHARS = 300
"""How much a field of a template may hold when more of the template follows it."""

CJK_LETTERS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Kana and CJK ideographs, as a regular-expression character range."""
CJK = re.compile(f"[{CJK_LETTERS}]")
WORD = re.compile(rf"[{CJK_LETTERS}]|[^\W_{CJK_LETTERS}]+")
"""A word as compared here: a run of letters and digits, or one CJK character."""
FIELD = re.compile(r"\{[A-Za-z_][\w.]*(?:![rsa])?(?::[^{}]*)?\}")
"""A field of a template (``{reason}``): what fills it is not the template's text."""
SENTENCE_END = re.compile(r"[.!?。\n](?!\w)")
REST_OF_SENTENCE = r"(?:[^.!?。\n]|\.(?=\w))*"
"""A field's filling when nothing of its template follows: the rest of its sentence."""


@dataclass(frozen=True)
class Template:
    """A text with fields, as a pattern over plain text: its words in order,
    punctuation between them free, each field filled with anything up to where the
    template goes on (or to the end of the sentence, where it does not).

    Attributes:
        pattern: The template from its first word on.
        field_first: The template starts with a field, which takes the words before
            that first word in the same sentence.
    """

    pattern: re.Pattern[str]
    field_first: bool

    @classmethod
    def of(cls, text: str) -> Template:
        """``text``, with its fields, as a template."""
        literals = FIELD.split(text)
        pieces: list[str] = []
        for number, literal in enumerate(literals):
            found = WORD.findall(plain(literal))
            if found:
                edge = "" if CJK.fullmatch(found[0]) else r"(?<!\w)"
                pieces.append(edge + r"[\W_]*".join(map(re.escape, found)))
            elif pieces:  # punctuation after a field: its strong marks must be there
                marks = [ch for ch in plain(literal) if ch in ":;.!?。"]
                pieces.append(rf"[\W_]*?{re.escape(marks[0])}[\W_]*" if marks else r"[\W_]*")
            if pieces and number < len(literals) - 1:  # a field follows
                more = any(WORD.search(rest) for rest in literals[number + 1 :])
                pieces.append(rf"[\s\S]{{0,{FIELD_CHARS}}}?" if more else REST_OF_SENTENCE)
        return cls(re.compile("".join(pieces)), field_first=not WORD.search(literals[0]))

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Where ``text`` (plain) holds the template, its fields filled in."""
        for match in self.pattern.finditer(text):
            start = match.start()
            if self.field_first:
                before = text[max(start - FIELD_CHARS, 0) : start]
                ends = [end.end() for end in SENTENCE_END.finditer(before)]
                start -= len(before) - (ends[-1] if ends else 0)
            yield start, match.end()


@dataclass
class TextIndex:
    """Texts, indexed for finding where a reply copies them.

    Attributes:
        runs: Every run of :data:`RUN_WORDS` words of each text; a field breaks runs.
        templates: Each text with fields and :data:`TEMPLATE_WORDS` words of its own.
        short: The words of each text shorter than :data:`COPIED_WORDS`.
        size: How many texts are indexed.
    """

    runs: set[tuple[str, ...]] = field(default_factory=set)
    templates: list[Template] = field(default_factory=list)
    short: set[tuple[str, ...]] = field(default_factory=set)
    size: int = 0

    def add(self, text: str) -> None:
        """Index one text."""
        parts = [WORD.findall(plain(part)) for part in FIELD.split(text)]
        for found in parts:
            self.runs.update(
                tuple(found[i : i + RUN_WORDS]) for i in range(len(found) - RUN_WORDS + 1)
            )
        if len(parts) == 1 and length(parts[0]) < COPIED_WORDS:
            self.short.add(tuple(parts[0]))
        if len(parts) > 1 and sum(map(len, parts)) >= TEMPLATE_WORDS:
            self.templates.append(Template.of(text))
        self.size += 1

    def copies(self, text: str, start: int, end: int) -> bool:
        """Whether ``text`` (plain) says nothing of its own between ``start`` and
        ``end`` (every word there copied) and copies at least :data:`COPIED_WORDS`
        words, or the whole of a short text. Words outside that stretch (a leading
        label) may be copied or not."""
        found = list(WORD.finditer(text))
        words = [word.group() for word in found]
        inside = [start <= word.start() and word.end() <= end for word in found]
        if tuple(word for word, said in zip(words, inside, strict=True) if said) in self.short:
            return True
        if length(words) < COPIED_WORDS:  # too short to copy enough, whatever it copies
            return False
        copied = [False] * len(words)
        for first in range(len(words) - RUN_WORDS + 1):
            if tuple(words[first : first + RUN_WORDS]) in self.runs:
                copied[first : first + RUN_WORDS] = [True] * RUN_WORDS
        for begin, finish in (span for each in self.templates for span in each.spans(text)):
            for number, word in enumerate(found):
                copied[number] |= begin <= word.start() and word.end() <= finish
        _count_edits(words, copied)
        says_nothing_else = all(c for c, said in zip(copied, inside, strict=True) if said)
        ours = [word for word, c in zip(words, copied, strict=True) if c]
        return says_nothing_else and length(ours) >= COPIED_WORDS


def length(words: Sequence[str]) -> float:
    """How many words ``words`` are, a CJK character counting as half of one."""
    return sum(0.5 if CJK.fullmatch(word) else 1.0 for word in words)


def _count_edits(words: Sequence[str], copied: list[bool]) -> None:
    """Mark as copied each stretch of at most :data:`EDIT_WORDS` words without digits
    that lies between copied words: a word or two changed inside a copy."""
    number = 0
    while number < len(words):
        if copied[number]:
            number += 1
            continue
        end = number
        while end < len(words) and not copied[end]:
            end += 1
        between = number > 0 and end < len(words)
        no_digits = not any(ch.isdigit() for word in words[number:end] for ch in word)
        if between and end - number <= EDIT_WORDS and no_digits:
            copied[number:end] = [True] * (end - number)
        number = end
