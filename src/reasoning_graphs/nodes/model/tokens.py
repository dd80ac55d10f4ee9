"""A token estimate for prompts and replies when the provider reports no usage.

The common rule of "4 characters per token" holds for English and other Latin
text (OpenAI, "What are tokens and how to count them": one token is about 4
characters of English text), but badly undercounts Chinese, Japanese and
Korean: BPE vocabularies such as ``cl100k_base`` spend one to two tokens on
most Han characters, so a CJK character counts 1.5 tokens here. No tokenizer
is loaded (``tiktoken`` downloads its files), so the estimate works offline
for any model.

Examples:
    >>> from langchain_core.messages import HumanMessage
    >>> text_tokens("The quick brown fox jumps over the lazy dog")
    11
    >>> text_tokens("今天天气很好")
    9
    >>> estimate_tokens([HumanMessage("今天天气很好")])
    12
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Iterable, Sequence

from langchain_core.messages import AIMessage, BaseMessage

from reasoning_graphs.history import Fold, folded

LATIN_CHARS_PER_TOKEN = 4.0
CJK_TOKENS_PER_CHAR = 1.5
MESSAGE_OVERHEAD_TOKENS = 3
"""Role and separators each chat message costs (as in OpenAI's chat format)."""

CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF00, 0xFFEF),  # Full-width forms
    (0x20000, 0x2FA1F),  # CJK Extensions B–F, compatibility supplement
)


def is_cjk(char: str) -> bool:
    """Whether ``char`` is a Chinese, Japanese or Korean character or full-width mark."""
    code = ord(char)
    return any(low <= code <= high for low, high in CJK_RANGES)


def text_tokens(text: str) -> int:
    """Estimated tokens of ``text``: 1.5 per CJK character, one per 4 other characters."""
    cjk = sum(is_cjk(char) for char in text)
    return _tokens_of(cjk, len(text) - cjk)


def _tokens_of(cjk: int, other: int) -> int:
    return math.ceil(cjk * CJK_TOKENS_PER_CHAR + other / LATIN_CHARS_PER_TOKEN)


class RunningEstimate:
    """:func:`text_tokens` of a text that arrives in pieces (a streamed reply), kept as it grows.

    Rounding each piece up instead would count a reply streamed word by word at up
    to twice its tokens, and stop it long before its allowance.

    Examples:
        >>> count = RunningEstimate()
        >>> [count.add(word) for word in ("The ", "quick ", "brown ", "fox")]
        [1, 2, 1, 1]
        >>> count.tokens == text_tokens("The quick brown fox")
        True
    """

    def __init__(self) -> None:
        self.cjk = self.other = self.tokens = 0

    def add(self, piece: str) -> int:
        """Count ``piece`` in; the tokens it adds to the estimate."""
        cjk = sum(is_cjk(char) for char in piece)
        self.cjk += cjk
        self.other += len(piece) - cjk
        before, self.tokens = self.tokens, _tokens_of(self.cjk, self.other)
        return self.tokens - before


def message_tokens(message: BaseMessage) -> int:
    """Estimated tokens of one message: its text, its tool calls and the role overhead."""
    parts: list[str] = [message.text]
    if isinstance(message, AIMessage) and message.tool_calls:
        parts.append(json.dumps(message.tool_calls, ensure_ascii=False, default=str))
    return MESSAGE_OVERHEAD_TOKENS + sum(text_tokens(part) for part in parts)


def estimate_tokens(messages: Iterable[BaseMessage]) -> int:
    """Estimated tokens of a prompt (or of a reply, as a one-message list)."""
    return sum(message_tokens(message) for message in messages)


CONVERSATION_TOKENS = Fold("tokens", int, lambda total, message: total + message_tokens(message))
"""The conversation's estimated tokens, kept as it grows."""


def prompt_tokens(prompt: Sequence[BaseMessage], conversation: Sequence[BaseMessage]) -> int:
    """:func:`estimate_tokens` of ``prompt``, reading the conversation's running total when
    the prompt ends with the conversation itself (the system prompt, then the state's messages)."""
    head = len(prompt) - len(conversation)
    if head >= 0 and all(map(operator.is_, prompt[head:], conversation)):
        return estimate_tokens(prompt[:head]) + folded(conversation, CONVERSATION_TOKENS)
    return estimate_tokens(prompt)
