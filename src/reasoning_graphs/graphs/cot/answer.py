"""Reading the final answer out of a chain of thought, and voting over several chains.

Models end their reasoning in many ways — ``Answer: 42``, ``**Final answer:** 42``,
``The answer is 42.`` — so extraction is tolerant: the last answer line wins,
then the last "the answer is" phrase, then the last line. Votes compare
normalised answers (case, spacing, markup, ``1,000`` vs ``1000.0``), and a tie
goes to the answer seen first, so the same samples always give the same result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from typing_extensions import TypedDict

ANSWER_LINE = re.compile(
    r"\banswer[\s*_]*[:：][\s*_]*(?P<answer>.+?)\s*$", re.IGNORECASE | re.MULTILINE
)
ANSWER_PHRASE = re.compile(r"\banswer\s+is\s*:?\s*(?P<answer>[^\n]+)", re.IGNORECASE)
BOXED = re.compile(r"\\boxed\{(?P<answer>[^{}]*)\}")
NUMBER = re.compile(r"^[-+]?\d[\d,]*(?:\.\d+)?$")
DECORATION = " \t*_`\"'$"
FENCED = re.compile(r"```[\w+-]*\n.*?\n```", re.DOTALL)
"""A fenced block (code): an answer that starts one is the whole block, not its first line."""


class Sample(TypedDict):
    """One chain of thought and the answer read from it (empty when it gave none)."""

    reasoning: str
    answer: str


class Vote(TypedDict):
    """The outcome of self-consistency: the majority answer and how many samples agree."""

    answer: str
    count: int
    total: int
    votes: dict[str, int]


def extract_answer(text: str) -> str:
    """The final answer a chain of thought states, or ``""`` when it states nothing.

    An answer that opens a fenced block (code) is the whole block, fences kept.

    Examples:
        >>> extract_answer("23*17 = 391, plus 4 is 395.\\n**Answer:** 395.")
        '395'
    """
    for pattern in (ANSWER_LINE, BOXED, ANSWER_PHRASE):
        matches = list(pattern.finditer(text))
        if matches:
            block = FENCED.match(text, matches[-1].start("answer"))
            return block.group(0) if block else _clean(matches[-1]["answer"])
    lines = [line for line in text.splitlines() if line.strip()]
    return _clean(lines[-1]) if lines else ""


def majority(samples: Sequence[Sample]) -> Vote:
    """The most common answer among ``samples``; ties go to the one seen first."""
    counts: dict[str, int] = {}
    shown: dict[str, str] = {}
    for sample in samples:
        if sample["answer"]:
            key = normalise(sample["answer"])
            counts[key] = counts.get(key, 0) + 1
            shown.setdefault(key, sample["answer"])
    if not counts:
        return Vote(answer="", count=0, total=len(samples), votes={})
    winner = max(counts, key=counts.__getitem__)  # max keeps the first of equal counts
    votes = {shown[key]: count for key, count in counts.items()}
    return Vote(answer=shown[winner], count=counts[winner], total=len(samples), votes=votes)


def normalise(answer: str) -> str:
    """The form answers are compared in: one spacing, no case, numbers by value."""
    text = " ".join(answer.split()).casefold()
    if NUMBER.match(text):
        value = float(text.replace(",", ""))
        return str(int(value)) if value.is_integer() else repr(value)
    return text


def _clean(answer: str) -> str:
    answer = answer.strip().strip(DECORATION).strip()
    boxed = BOXED.search(answer)
    if boxed:
        answer = boxed["answer"].strip()
    return answer.rstrip(".").strip(DECORATION).strip()
