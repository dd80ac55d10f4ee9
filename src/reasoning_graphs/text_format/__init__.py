"""The text ReAct format: labels, the prompt that teaches it, and a forgiving parser.

Models write ``Thought:`` / ``Action:`` / ``Action Input:`` (or ``Final Answer:``)
as plain text; the runtime appends each ``Observation:``. Use
:func:`build_system_prompt` to ask for the format, pass :func:`stop_sequences` to
generation, and read each reply with :func:`parse_step`.
"""

from reasoning_graphs.text_format.labels import CHINESE, ENGLISH, LABELS, Labels, labels_for
from reasoning_graphs.text_format.parser import (
    ParsedStep,
    cut_invented,
    parse_step,
    stop_sequences,
)
from reasoning_graphs.text_format.prompt import (
    build_system_prompt,
    format_error_observation,
    format_reminder,
)

__all__ = [
    "CHINESE",
    "ENGLISH",
    "LABELS",
    "Labels",
    "ParsedStep",
    "build_system_prompt",
    "cut_invented",
    "format_error_observation",
    "format_reminder",
    "labels_for",
    "parse_step",
    "stop_sequences",
]
