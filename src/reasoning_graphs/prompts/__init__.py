"""Prompt text, kept apart from the graphs: one module per pattern, shared text here."""

from reasoning_graphs.prompts.react import (
    ANSWER_NOW,
    EVIDENCE_LINE,
    INCOMPLETE_NOTE,
    NO_ANSWER,
    REACT_SYSTEM,
)

__all__ = ["ANSWER_NOW", "EVIDENCE_LINE", "INCOMPLETE_NOTE", "NO_ANSWER", "REACT_SYSTEM"]
