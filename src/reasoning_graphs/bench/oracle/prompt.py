"""Reading a prompt the way the oracle needs it: what was bound, which calls ran, what they said.

The oracle decides every reply from the prompt alone, so it reads what each
pattern shows its model: tool calls and their observations as messages (the
native loops), observations as data blocks inside text (the text format, the
planners' reports, the judges), and the fields of a pattern's prompt template.
The templates are the patterns' own constants, so a reworded prompt is read
without a second copy of its text here.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from pydantic import BaseModel

from reasoning_graphs.metadata import decision_of
from reasoning_graphs.nodes.guards.untrusted import CLOSE, OPEN
from reasoning_graphs.nodes.steps.approve import (
    OVER_CALL_LIMIT,
    OVER_QUESTION_LIMIT,
    REJECTED_BEFORE,
    REJECTED_NOW,
)
from reasoning_graphs.tools.execute import CANNOT_USE, TOOL_FAILED, TOOL_TIMED_OUT
from reasoning_graphs.tools.output import content_text
from reasoning_graphs.tools.registry import INVALID_ARGUMENTS, UNKNOWN_TOOL

_OPEN_BEFORE, _OPEN_AFTER = OPEN.split("{source}")
DATA_BLOCK = re.compile(
    re.escape(_OPEN_BEFORE)
    + r"(?P<source>[^\n]*?)"
    + re.escape(_OPEN_AFTER)
    + r"\n(?P<body>.*?)\n"
    + re.escape(CLOSE),
    re.DOTALL,
)
"""One block of :func:`~reasoning_graphs.nodes.guards.untrusted.as_data`: its source and
its text."""

REJECTIONS = tuple(template.split("{")[0] for template in (REJECTED_NOW, REJECTED_BEFORE))
"""How the observation of a call the reviewer rejected begins."""

FAILURES = tuple(
    dict.fromkeys(
        template.split("{")[0]
        for template in (
            TOOL_FAILED,
            UNKNOWN_TOOL,
            INVALID_ARGUMENTS,
            CANNOT_USE,
            TOOL_TIMED_OUT,
            OVER_CALL_LIMIT,
            OVER_QUESTION_LIMIT,
        )
    )
)
"""How the observation of a call that failed or did not run begins, where a view shows the
text without its status (the text format, a step's result, a judge's request)."""


class OracleError(RuntimeError):
    """A prompt the oracle cannot read: the pattern's protocol changed under it."""


@dataclass(frozen=True)
class Prompt:
    """One model call as the oracle sees it.

    Attributes:
        messages: The prompt.
        tools: The names bound to the call: tools, or the one schema of a typed request.
        tool_choice: ``"none"`` when tools are described but may not be called.
        repeat: How many earlier calls had exactly this prompt (the sample's number).
    """

    messages: Sequence[BaseMessage]
    tools: Sequence[str]
    tool_choice: Any = None
    repeat: int = 0

    def binds(self, schema: type[BaseModel]) -> bool:
        """Whether the call asks for a typed reply in ``schema``."""
        return list(self.tools) == [schema.__name__]

    @property
    def may_call_tools(self) -> bool:
        return bool(self.tools) and self.tool_choice != "none"

    def human_texts(self) -> list[str]:
        """The text of every human message, in order."""
        return [m.text for m in self.messages if isinstance(m, HumanMessage)]

    def last_human(self) -> str:
        texts = self.human_texts()
        if not texts:
            raise OracleError("the prompt has no human message")
        return texts[-1]


@dataclass(frozen=True)
class Observation:
    """One call that was settled, as the prompt shows it.

    Attributes:
        tool: The tool's name.
        output: What the model was shown as its result.
        failed: The call ran and failed, or did not run (blocked, skipped, rejected).
        rejected: A person rejected it.
    """

    tool: str
    output: str
    failed: bool = False
    rejected: bool = False


def is_rejection(text: str) -> bool:
    """Whether an observation says the reviewer rejected the call."""
    return text.startswith(REJECTIONS)


def reads_as_failure(text: str) -> bool:
    """Whether an observation says its call failed, or did not run."""
    return text.startswith(FAILURES) or is_rejection(text)


def native_observations(messages: Sequence[BaseMessage]) -> list[Observation]:
    """Each tool call of the prompt's model turns that has its observation, in call order."""
    answers = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    found: list[Observation] = []
    for message in messages:
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            answer = answers.get(call["id"] or "")
            if answer is None:
                continue
            output = content_text(answer.content)
            rejected = decision_of(answer) == "rejected" or is_rejection(output)
            failed = answer.status == "error" or rejected
            found.append(Observation(call["name"], output, failed=failed, rejected=rejected))
    return found


def data_blocks(text: str) -> list[tuple[str, str]]:
    """The (source, text) of every data block in ``text``, in order."""
    return [(m["source"], m["body"]) for m in DATA_BLOCK.finditer(text)]


def block_observation(source: str, body: str) -> Observation:
    """A data block read as the observation of the call its source names.

    The source is a tool's name (the text format) or a call as people read it,
    ``calculator(expression='6*7')`` (the judges' views).
    """
    tool = source.split("(", 1)[0].strip()
    return Observation(tool, body, failed=reads_as_failure(body), rejected=is_rejection(body))


def template_fields(template: str, text: str) -> dict[str, str] | None:
    """The values a ``str.format`` template was filled with to make ``text``, or ``None``.

    Each field matches as little as it can, so a field is read up to the first
    place the template's next literal text appears.

    Examples:
        >>> template_fields("Task: {task}\\n\\nAnswer:\\n{answer}", "Task: 6*7?\\n\\nAnswer:\\n42")
        {'task': '6*7?', 'answer': '42'}
    """
    pattern: list[str] = []
    named: set[str] = set()
    for literal, name, _, _ in string.Formatter().parse(template):
        pattern.append(re.escape(literal))
        if name is None:
            continue
        if name in named:
            pattern.append(f"(?P={name})")
        else:
            pattern.append(f"(?P<{name}>.*?)")
            named.add(name)
    match = re.fullmatch("".join(pattern), text, re.DOTALL)
    return match.groupdict() if match else None


def literal_between(template: str, before: str, after: str) -> str:
    """The fixed text of ``template`` between the fields ``before`` and ``after``."""
    start = template.index("{" + before + "}") + len(before) + 2
    return template[start : template.index("{" + after + "}", start)]
