"""The honest-answer check on its labelled corpus: precision, recall and the counts.

The corpus (``tests/fixtures/honest_corpus.jsonl``) holds final replies a model
might give, in English and Chinese, each labelled ``answer`` or ``no_answer``.
A reply the check flags (``no_answer_reason`` gives a reason) is a positive:
TP a no-answer caught, FP a real answer taken for no answer, FN a no-answer let
through as an answer, TN a real answer let through. Every pattern is loaded
first, so that its prompts count as ours, as they do in a run.

Run: python benchmarks/honest.py [--misses]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.nodes.guards.honest import no_answer_reason

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "honest_corpus.jsonl"


def outcome(flagged: bool, label: str) -> str:
    """TP, FP, FN or TN for a reply the check ``flagged`` (or not) that is labelled ``label``."""
    if flagged:
        return "TP" if label == "no_answer" else "FP"
    return "FN" if label == "no_answer" else "TN"


def figures(counts: Counter[str]) -> str:
    """One line of counts with precision and recall."""
    tp, fp, fn, tn = (counts[key] for key in ("TP", "FP", "FN", "TN"))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return (
        f"{tp + fp + fn + tn:4d} replies  TP {tp:3d}  FP {fp:3d}  FN {fn:3d}  TN {tn:3d}"
        f"  precision {precision:.3f}  recall {recall:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list every FP and FN reply")
    misses = parser.parse_args().misses
    for pattern in PATTERNS:
        graph_builder(pattern)
    total: Counter[str] = Counter()
    by_language: dict[str, Counter[str]] = {}
    wrong: list[tuple[str, str, str]] = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        reply = json.loads(line)
        result = outcome(no_answer_reason(reply["text"]) is not None, reply["label"])
        total[result] += 1
        by_language.setdefault(reply["lang"], Counter())[result] += 1
        if result in ("FP", "FN"):
            wrong.append((result, reply["kind"], reply["text"]))
    print(f"all  {figures(total)}")
    for language, counts in sorted(by_language.items()):
        print(f"{language:4} {figures(counts)}")
    if misses:
        for result, kind, text in wrong:
            print(f"{result} {kind:20} {text!r}")


if __name__ == "__main__":
    main()
