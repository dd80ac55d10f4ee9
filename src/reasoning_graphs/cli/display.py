"""Text as a line of the terminal shows it: HTML entities decoded, long quotes cut.

A model behind an HTTP server may return its text with HTML entities in it
(``The user&#39;s``); a person reads the character they stand for. A name or
an argument the model made up can run to thousands of characters, and the
notes and errors that quote it would fill the screen; a line shows the start
of such a quote and how much was left out. Only the printed line changes: the
state, ``--json`` output and the ``--trace`` file keep the text as it was.

Examples:
    >>> decoded("The user&#39;s question &amp; more")
    "The user's question & more"
    >>> shortened("uses '" + "x" * 250 + "', which is unknown", limit=10)
    "uses 'xxxxxxxxxx…' (240 more characters), which is unknown"
"""

from __future__ import annotations

import html
import re

QUOTE_LIMIT = 200
"""Characters of a quote, or of a word, that a line shows before it cuts it."""
LEFT_OUT = " ({count:,} more characters)"

_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
"""An HTML entity with its closing semicolon: without one, ``&para`` in a URL stays as it is."""
_LONG_TEXT = re.compile(
    # a quoted string as ``repr`` writes it, its quote not inside a word (``model's`` is no quote)
    r"""(?<!\w)(?P<quote>['"])(?P<quoted>(?:\\.|(?!(?P=quote))[^\\\n])*)(?P=quote)(?!\w)"""
    r"""|(?P<word>[^\s'"]+)"""
)


def decoded(text: str) -> str:
    """``text`` with its HTML entities replaced by the characters they stand for."""
    return _ENTITY.sub(lambda entity: html.unescape(entity.group()), text)


def shortened(text: str, *, limit: int = QUOTE_LIMIT) -> str:
    """``text`` with each quote, and each word without spaces, longer than ``limit`` cut
    to its first ``limit`` characters, followed by how many were left out."""

    def cut(found: re.Match[str]) -> str:
        quote = found.group("quote") or ""
        inner = found.group("quoted") if quote else found.group()
        if len(inner) <= limit:
            return found.group()
        left_out = LEFT_OUT.format(count=len(inner) - limit)
        return f"{quote}{inner[:limit]}…{quote}{left_out}"

    return _LONG_TEXT.sub(cut, text)
