"""The embedded model's JSON actions: blank tokens are masked outside strings, never inside.

A lone space token, near-tied with the merged space-and-quote one, made SmolLM2-135M open
values with ``".`` (``.12 * 12`` for ``12*12``). The mask reads the reply as it grows; a
fake vocabulary stands in for the model here, since the mask needs only its tokens' text.
"""

from __future__ import annotations

import numpy as np

from reasoning_graphs.models.local import _BlankMask

VOCAB = ["{", '"', "action", '":', " ", ' "', "12", " *", "\\", "}", "\n", "  "]
BLANK = [VOCAB.index(" "), VOCAB.index("\n"), VOCAB.index("  ")]
PROMPT = [0, 0, 0]


class Vocabulary:
    def n_vocab(self) -> int:
        return len(VOCAB)

    def detokenize(self, tokens: list[int]) -> bytes:
        return "".join(VOCAB[t] for t in tokens).encode()


def masked_after(mask: _BlankMask, written: list[str]) -> list[int]:
    """The tokens masked once ``written`` follows the prompt."""
    ids = np.array(PROMPT + [VOCAB.index(w) for w in written])
    scores = mask(ids, np.zeros(len(VOCAB), dtype=np.single))
    return [t for t in range(len(VOCAB)) if scores[t] == -np.inf]


def test_blanks_are_masked_outside_strings_and_allowed_inside() -> None:
    mask = _BlankMask(Vocabulary())  # type: ignore[arg-type]
    assert masked_after(mask, []) == BLANK  # the prompt alone: the reply starts outside
    assert masked_after(mask, ["{", '"']) == []  # a key is being written
    assert masked_after(mask, ["{", '"', "action", '":']) == BLANK
    assert masked_after(mask, ["{", '"', "action", '":', ' "', "12"]) == []
    assert masked_after(mask, ["{", '"', "action", '":', ' "', "12", '"']) == BLANK


def test_an_escaped_quote_keeps_the_string_open() -> None:
    mask = _BlankMask(Vocabulary())  # type: ignore[arg-type]
    masked_after(mask, [])
    assert masked_after(mask, ['"', "\\", '"', " *"]) == []


def test_a_second_look_at_the_same_position_reads_nothing_twice() -> None:
    mask = _BlankMask(Vocabulary())  # type: ignore[arg-type]
    masked_after(mask, [])
    assert masked_after(mask, ['"']) == []
    assert masked_after(mask, ['"']) == []  # the quote is not read again: still inside
