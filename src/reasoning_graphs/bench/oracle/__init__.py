"""The oracle: a chat model that knows each task's gold answer and still uses the pattern.

It makes the model calls the pattern makes — plans, tool calls, judgements,
reflections, samples — and decides each reply from the prompt it gets (the
messages, the bound tools or schema, ``tool_choice``) and the task's gold
data, so that every pattern answers correctly along its own protocol and the
bench measures the pattern's cost, not a model's luck. One module per pattern
holds that pattern's protocol. A task's ``draft`` is its first answer until
the prompt shows feedback (see :mod:`.answers`). Deterministic: the same
prompts get the same replies. It never loops: once the prompt shows the gold
steps done (or a step failed or was rejected) it answers.

Being a :class:`~reasoning_graphs.testing.ScriptedChatModel`, it reports
usage, sleeps ``delay`` per call and ``token_delay`` per output token, streams,
and delivers structured outputs as tool calls, like a real provider.

Examples:
    >>> from reasoning_graphs.bench.suite import Task
from reasoning_graphs.graphs import PATTERNS
    >>> from reasoning_graphs import build_graph
    >>> from reasoning_graphs.tools.builtins import calculator
    >>> task = Task.from_json({"id": "t", "question": "What is 6*7?", "answer": "42",
    ...     "tools": ["calculator"], "trajectory": [
    ...         {"tool": "calculator", "args": {"expression": "6*7"}}]})
    >>> graph = build_graph("react", OracleChatModel(task=task, pattern="react"),
    ...     tools=[calculator()])
    >>> graph.invoke({"messages": [("user", task.question)]})["messages"][-1].content
    '42'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from pydantic import InstanceOf, PrivateAttr, field_validator

from reasoning_graphs.bench.oracle.prompt import OracleError, Prompt
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.graphs import PATTERNS
from reasoning_graphs.testing import RecordedCall, ScriptedChatModel

Protocol = Callable[[Task, Prompt], Any]
"""A pattern's protocol: the reply (a script item) to one call of the pattern on a task."""

PROTOCOLS: dict[str, Protocol] = {name: record.load_oracle() for name, record in PATTERNS.items()}
"""Each pattern's protocol, the one its record names (a module of this package each)."""

NO_PROTOCOL = "The oracle has no protocol for pattern {name!r}; it knows: {known}."

__all__ = ["PROTOCOLS", "OracleChatModel", "OracleError"]


class OracleChatModel(ScriptedChatModel):
    """A model that follows ``pattern``'s protocol to ``task``'s gold answer.

    Attributes:
        task: The task whose gold trajectory, answer, draft and reasoning it follows.
        pattern: The pattern it is driven by (a key of :data:`PROTOCOLS`).
        count_tool_schemas: On by default: bound tool and schema definitions count as
            prompt tokens, as a provider counts them, so native tool calling is not
            cheaper than a tool list in the prompt text merely by not being counted.
    """

    task: InstanceOf[Task]
    pattern: str
    count_tool_schemas: bool = True

    _seen: dict[str, int] = PrivateAttr(default_factory=dict)

    @field_validator("pattern")
    @classmethod
    def _known_pattern(cls, name: str) -> str:
        if name not in PROTOCOLS:
            raise ValueError(NO_PROTOCOL.format(name=name, known=", ".join(PROTOCOLS)))
        return name

    @property
    def _llm_type(self) -> str:
        return "oracle"

    def _choose_reply(self, record: RecordedCall) -> Any:
        """The protocol's reply, worked out outside the lock (a judge may run tests)."""
        key = _prompt_key(record)
        repeat = self._seen.get(key, 0)
        self._seen[key] = repeat + 1
        prompt = Prompt(record.messages, record.tools, record.tool_choice, repeat)
        protocol = PROTOCOLS[self.pattern]
        return lambda _messages: protocol(self.task, prompt)


def _prompt_key(record: RecordedCall) -> str:
    """What makes two calls the same call: the prompt's messages and what was bound."""
    shown = [(m.type, m.content, getattr(m, "tool_calls", None)) for m in record.messages]
    text = json.dumps([shown, record.tools, record.tool_choice], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
