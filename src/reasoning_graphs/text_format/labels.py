"""The words that mark each part of a text-format ReAct reply, per language.

The parser, the stop sequences and the prompt all read their label text from one
:class:`Labels` value, so a new language is one more constant here.
"""

from __future__ import annotations

from dataclasses import dataclass

UNKNOWN_LANGUAGE = "Unknown label language {language!r}; choose one of: {choices}."


@dataclass(frozen=True)
class Labels:
    """The label text of the five parts of a ReAct reply.

    Attributes:
        thought: Marks the model's reasoning.
        action: Marks the name of the tool to call.
        action_input: Marks the tool's arguments.
        observation: Marks a tool result; only the runtime writes it.
        final_answer: Marks the answer that ends the run.
    """

    thought: str
    action: str
    action_input: str
    observation: str
    final_answer: str


ENGLISH = Labels("Thought", "Action", "Action Input", "Observation", "Final Answer")
CHINESE = Labels("思考", "行动", "行动输入", "观察", "最终答案")
LABELS: dict[str, Labels] = {"en": ENGLISH, "zh": CHINESE}


def labels_for(language: str) -> Labels:
    """The labels of a language code.

    Args:
        language: A key of :data:`LABELS`, e.g. ``"en"`` or ``"zh"``.

    Raises:
        ValueError: The language has no labels; the message lists the choices.

    Examples:
        >>> labels_for("zh").final_answer
        '最终答案'
    """
    try:
        return LABELS[language]
    except KeyError:
        choices = ", ".join(sorted(LABELS))
        raise ValueError(UNKNOWN_LANGUAGE.format(language=language, choices=choices)) from None
