"""The honest-answer check, measured on a labelled corpus of replies.

``fixtures/honest_corpus.jsonl`` holds replies a model might give as its final
answer, in English and Chinese, each labelled ``answer`` or ``no_answer``:
short answers, answers that quote the tools or our instructions among their
own words, empties, bare labels, the no-answer text and rewordings of it,
echoes of our prompts and of the runtime's notes, and the same written with
zero-width characters, look-alike letters and fullwidth forms. No real answer
may be taken for no answer; of the no-answers, the check must catch at least
:data:`RECALL_FLOOR` (``benchmarks/honest.py`` prints the full figures).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.nodes.guards.honest import no_answer_reason

CORPUS = Path(__file__).parent / "fixtures" / "honest_corpus.jsonl"
RECALL_FLOOR = 0.97
"""The share of the corpus's no-answers the check catches, at least (measured: 0.973)."""


def corpus() -> list[dict[str, Any]]:
    with CORPUS.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def verdicts() -> list[tuple[dict[str, Any], bool]]:
    """Each reply with whether the check takes it for no answer, every pattern's texts
    declared (a pattern declares its prompts when it is loaded)."""
    for pattern in PATTERNS:
        graph_builder(pattern)
    return [(reply, no_answer_reason(reply["text"]) is not None) for reply in corpus()]


def test_the_corpus_holds_both_labels_in_both_languages() -> None:
    replies = corpus()
    counts = Counter((reply["lang"], reply["label"]) for reply in replies)

    assert len(replies) >= 200
    assert set(counts) == {
        (lang, label) for lang in ("en", "zh") for label in ("answer", "no_answer")
    }
    assert min(counts.values()) >= 40


def test_no_real_answer_is_taken_for_no_answer(verdicts: list[tuple[dict[str, Any], bool]]) -> None:
    flagged = [
        reply["text"] for reply, no_answer in verdicts if no_answer and reply["label"] == "answer"
    ]

    assert flagged == []


def test_the_no_answers_are_caught(verdicts: list[tuple[dict[str, Any], bool]]) -> None:
    no_answers = [(reply, flagged) for reply, flagged in verdicts if reply["label"] == "no_answer"]
    missed = [reply["text"] for reply, flagged in no_answers if not flagged]

    recall = 1 - len(missed) / len(no_answers)

    assert recall >= RECALL_FLOOR, missed


@pytest.mark.parametrize("kind", ["empty", "label_only", "paraphrase", "trick"])
def test_every_empty_label_only_reworded_or_disguised_no_answer_is_caught(
    verdicts: list[tuple[dict[str, Any], bool]], kind: str
) -> None:
    missed = [
        reply["text"]
        for reply, flagged in verdicts
        if reply["label"] == "no_answer" and reply["kind"] == kind and not flagged
    ]

    assert missed == []
