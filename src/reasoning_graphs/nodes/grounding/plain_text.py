"""Text as a reader sees it, for comparing a model's reply with our own texts.

A reply can read exactly like one of our texts and still differ in its code
points: a zero-width space inside a word, a Cyrillic ``о`` for a Latin ``o``,
fullwidth or mathematical letters. :func:`plain` folds those away, so that a
comparison is made on what the reader sees.

Examples:
    >>> plain("I c\u043euld n\u043et fin\u200bish \uff34\uff28\uff29\uff33")
    'i could not finish this'
"""

from __future__ import annotations

import unicodedata

LOOKALIKES = str.maketrans(
    {
        **dict(zip("АВЕКМНОРСТХІЈЅҮԀԚԜӀ", "ABEKMHOPCTXIJSYDQWI", strict=True)),
        **dict(zip("аеһіјорсѕухԁԛԝӏ", "aehijopcsyxdqwl", strict=True)),
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX", strict=True)),
        **dict(zip("αεικνορτυχ", "aeikvoptux", strict=True)),
        **dict(zip("ıȷօս", "ijou", strict=True)),
    }
)
"""Cyrillic, Greek and other letters that look like a Latin one, mapped to it."""


def plain(text: str) -> str:
    """``text`` folded to what a reader sees, in lower case.

    Format characters (category ``Cf``: zero-width spaces and joiners, the
    word joiner, the byte-order mark, the soft hyphen, direction marks) are
    removed; Unicode NFKC turns fullwidth, styled and compatibility forms into
    plain ones; :data:`LOOKALIKES` maps look-alike letters to Latin ones.
    """
    visible = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return unicodedata.normalize("NFKC", visible).translate(LOOKALIKES).casefold()
