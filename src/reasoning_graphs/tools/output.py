"""What a tool call returned, in the shape the runtime records it.

A LangChain tool invoked with a tool call answers with a ``ToolMessage``
(content as text or content blocks, an artifact, a status), or with a
``Command`` — or a list of both — that carries that message in its state
update. :func:`read_output` checks the answer as LangGraph's ``ToolNode``
does and splits it into the call's observation and the rest of the command;
:func:`cut_long` shortens long observations, keeping the full text.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from langchain_core.messages import ToolMessage, convert_to_messages
from langgraph.graph import END
from langgraph.prebuilt.tool_node import msg_content_output
from langgraph.types import Command, Send

from reasoning_graphs.metadata import with_advice
from reasoning_graphs.tools.builtins.observations import READ_OBSERVATION

NO_OBSERVATION = (
    "{name!r} returned a Command whose update has no ToolMessage for this call "
    "(tool_call_id {call_id!r}), so none of it was applied. The tool must include "
    "ToolMessage(..., tool_call_id=<the injected tool call id>) in Command.update['messages']."
)
MANY_OBSERVATIONS = (
    "{name!r} returned {count} ToolMessages for this call (tool_call_id {call_id!r}); "
    "exactly one is expected, so none of its output was applied."
)
UNEXPECTED_OUTPUT = "{name!r} returned {kind}, which is not a tool result."
UNSUPPORTED_UPDATE = (
    "{name!r} returned a Command with an update of type {kind}; "
    "use a dict of state keys, so none of it was applied."
)
CUT_MARKER = (
    "\n[... {cut} characters cut; the full text is available with "
    + READ_OBSERVATION
    + "(ref={ref!r}) ...]\n"
)
NOT_APPLIED = "\n(The tool also asked to {requests}; {reason}, so that was not done.)"
UPDATE_REQUEST = "update the graph state ({keys})"
GOTO_REQUEST = "go to {targets}"
PARENT_REQUEST = "hand over to the parent graph"
MEDIA_PLACEHOLDER = "[{kind}]"

MESSAGES = "messages"
Status = Literal["success", "error"]


class ToolOutputError(ValueError):
    """The tool's answer breaks the tool-call contract; the message is the observation."""


@dataclass(frozen=True)
class ToolCommand:
    """What a ``Command`` returned by a tool asks for besides the call's observation.

    Attributes:
        updates: State writes as ``(key, value)`` pairs, in the tool's order
            (other messages under ``"messages"``), the observation taken out.
        goto: Where to go next within the graph (node names, ``END``, ``Send``).
        parent: Commands addressed to the parent graph, to pass on unchanged.
    """

    updates: tuple[tuple[str, Any], ...] = ()
    goto: tuple[str | Send, ...] = ()
    parent: tuple[Command, ...] = ()

    @property
    def ends_turn(self) -> bool:
        """The tool asked to end the run here (``goto=END``)."""
        return END in self.goto

    def requests(
        self, *, keys: Collection[str] | None = None, goto: bool = True, parent: bool = True
    ) -> list[str]:
        """What was asked, as phrases: ``keys`` limits the updates named (``None``: all)."""
        named = [key for key, _ in self.updates if keys is None or key in keys]
        phrases = []
        if named:
            keys_text = ", ".join(repr(key) for key in dict.fromkeys(named))
            phrases.append(UPDATE_REQUEST.format(keys=keys_text))
        targets = [target for target in self.goto if target != END]
        if goto and targets:
            shown = ", ".join(repr(t.node if isinstance(t, Send) else t) for t in targets)
            phrases.append(GOTO_REQUEST.format(targets=shown))
        if parent and self.parent:
            phrases.append(PARENT_REQUEST)
        return phrases


@dataclass(frozen=True)
class ToolResult:
    """What one call produced, as the model will see it.

    Attributes:
        content: The observation as text (cut when long): what trajectories,
            trees and plans record.
        status: ``success`` or ``error`` — the tool's own, when it handled an error.
        duration_ms: Time the call took.
        ref: Where the full text is kept when the observation was cut.
        full_text: The full text of a cut observation.
        message: The ``ToolMessage`` to record: the tool's own, as it came
            (content blocks, artifact, status), or one made from ``content``.
        command: The rest of a ``Command`` the tool returned, if any.
        return_direct: The tool's result is the answer of the turn.
        transient: The call failed in a way that may pass (its own timeout, a
            lost connection), even after its one retry: not a result to reuse.
        raised: What the tool raised, when it failed so: a ``wrap_tool_call`` hook sees
            it raised, as under ``ToolNode`` (a retry hook retries it).
    """

    content: str
    status: Status
    duration_ms: float
    ref: str | None = None
    full_text: str | None = None
    message: ToolMessage | None = field(default=None, compare=False)
    command: ToolCommand | None = None
    return_direct: bool = False
    transient: bool = False
    raised: BaseException | None = field(default=None, compare=False, repr=False)

    def to_message(self, call_id: str, name: str) -> ToolMessage:
        """The call's ``ToolMessage``: the tool's own when there is one."""
        if self.message is not None:
            return self.message
        return ToolMessage(self.content, tool_call_id=call_id, name=name, status=self.status)

    def with_notice(self, notice: str) -> ToolResult:
        """This result with ``notice`` before its text (and before the tool's own message's)."""
        message = self.message
        if message is not None:
            message = message.model_copy(update={"content": _noticed(notice, message.content)})
        return replace(self, content=f"{notice}\n\n{self.content}", message=message)

    def with_note(self, requests: Sequence[str], reason: str) -> ToolResult:
        """This result with what the tool asked for, and did not get, told to the model:
        in the recorded text, and as advice on the tool's message, whose content stays
        the tool's (see :func:`~reasoning_graphs.metadata.with_advice`)."""
        if not requests:
            return self
        note = NOT_APPLIED.format(requests=" and ".join(requests), reason=reason)
        message = self.message
        if message is not None:
            message = with_advice(message, note.strip().strip("()"))
        return replace(self, content=self.content + note, message=message)

    def without_command(self, reason: str) -> ToolResult:
        """This result for a caller that applies no command: every request told, none kept."""
        requests = self.command.requests() if self.command else []
        return replace(self.with_note(requests, reason), command=None)


def read_output(output: Any, *, call_id: str, name: str) -> tuple[ToolMessage, ToolCommand | None]:
    """Split a tool's answer into the call's observation and the rest of a command."""
    if isinstance(output, ToolMessage):  # the tool's own message answers this call
        return _observation(output.model_copy(update={"tool_call_id": call_id})), None
    items = list(output) if isinstance(output, list) else [output]
    observations: list[ToolMessage] = []
    updates: list[tuple[str, Any]] = []
    goto: list[str | Send] = []
    parent: list[Command] = []
    commands = 0
    for item in items:
        if isinstance(item, ToolMessage):
            _collect(item, call_id, observations, updates)
        elif isinstance(item, Command):
            commands += 1
            if item.graph == Command.PARENT:
                parent.append(item)
                continue
            for key, value in _update_pairs(item, name):
                if key != MESSAGES:
                    updates.append((key, value))
                    continue
                for message in convert_to_messages(value if isinstance(value, list) else [value]):
                    _collect(message, call_id, observations, updates)
            goto.extend(_targets(item.goto))
        else:
            raise ToolOutputError(UNEXPECTED_OUTPUT.format(name=name, kind=type(item).__name__))
    if len(observations) > 1:
        raise ToolOutputError(
            MANY_OBSERVATIONS.format(name=name, count=len(observations), call_id=call_id)
        )
    command = ToolCommand(tuple(updates), tuple(goto), tuple(parent)) if commands else None
    if not observations:
        if command is None or not command.parent:
            raise ToolOutputError(NO_OBSERVATION.format(name=name, call_id=call_id))
        observations.append(ToolMessage("", tool_call_id=call_id, name=name))
    return _observation(observations[0]), command


def _observation(message: ToolMessage) -> ToolMessage:
    """The tool's own message as ``ToolNode`` records it: its name, artifact and status as
    the tool set them (a reader that needs the tool's name takes it from the call)."""
    return message.model_copy(update={"content": msg_content_output(message.content)})


def content_text(content: str | list[Any]) -> str:
    """An observation's text: text blocks as they are, other blocks named."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if not isinstance(block, dict):
            parts.append(str(block))
        elif block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "json":
            parts.append(json.dumps(block.get("json"), ensure_ascii=False, default=str))
        else:
            parts.append(MEDIA_PLACEHOLDER.format(kind=block.get("type", "block")))
    return "\n".join(parts)


def cut_long(text: str, limit: int, ref: str) -> str | None:
    """Head and tail of ``text`` around a marker naming ``ref``; ``None`` when it fits."""
    if len(text) <= limit:
        return None
    marker = CUT_MARKER.format(cut=len(text), ref=ref)  # the widest the count can be
    keep = max(limit - len(marker), 2)
    head, tail = keep * 2 // 3, keep - keep * 2 // 3
    cut = len(text) - head - tail
    return text[:head] + CUT_MARKER.format(cut=cut, ref=ref) + text[len(text) - tail :]


def with_cut_text(content: str | list[Any], cut: str) -> str | list[Any]:
    """Content whose text is replaced by its cut version; media blocks stay."""
    if isinstance(content, str):
        return cut
    media = [b for b in content if isinstance(b, dict) and b.get("type") not in ("text", "json")]
    return [{"type": "text", "text": cut}, *media] if media else cut


def _collect(
    message: Any, call_id: str, observations: list[ToolMessage], updates: list[tuple[str, Any]]
) -> None:
    if isinstance(message, ToolMessage) and message.tool_call_id == call_id:
        observations.append(message)
    else:
        updates.append((MESSAGES, [message]))


def _update_pairs(command: Command, name: str) -> list[tuple[str, Any]]:
    update = command.update
    if update is None:
        return []
    if isinstance(update, Mapping):
        return list(update.items())
    if isinstance(update, (list, tuple)) and all(
        isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) for pair in update
    ):
        return list(update)
    raise ToolOutputError(UNSUPPORTED_UPDATE.format(name=name, kind=type(update).__name__))


def _targets(goto: Any) -> list[str | Send]:
    if isinstance(goto, (str, Send)):
        return [goto]
    return list(goto or ())


def _noticed(notice: str, content: Any) -> Any:
    """A message content (text, or content blocks) with ``notice`` first."""
    if isinstance(content, str):
        return f"{notice}\n\n{content}" if content else notice
    return [{"type": "text", "text": notice}, *content]
