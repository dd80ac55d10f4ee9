"""The conversation as the model reads it: each long observation cut, the rest as saved.

The state keeps every observation as its tool returned it. A prompt must stay
small, so the model reads an observation longer than its tool's
``max_observation_chars`` as head and tail around a pointer to
``read_observation`` (:func:`~reasoning_graphs.tools.execute.cut_message`).
The view is a running fold of the conversation (:mod:`reasoning_graphs.history`):
a step cuts only the messages added since the step before, and the view itself
grows the same way, so a fold over it (the text format's transcript) does too.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

from reasoning_graphs.history import Fold, Indexed, folded
from reasoning_graphs.tools.execute import cut_message
from reasoning_graphs.tools.registry import ToolRegistry


def model_view(messages: Sequence[AnyMessage], registry: ToolRegistry) -> Sequence[AnyMessage]:
    """``messages`` with each long observation cut for the model, and named after the tool
    its call named when the tool's own message gave no name (read only)."""
    return folded(messages, _view_fold(registry)).messages


class _View:
    def __init__(self) -> None:
        self.messages = Indexed()
        self.names: dict[str, str] = {}  # call id → tool name


def _view_fold(registry: ToolRegistry) -> Fold[_View]:
    def step(view: _View, message: AnyMessage) -> _View:
        if isinstance(message, AIMessage):
            view.names.update({call["id"] or "": call["name"] for call in message.tool_calls})
        elif isinstance(message, ToolMessage):
            if message.name is None:
                name = view.names.get(message.tool_call_id)
                message = message.model_copy(update={"name": name})
            message = cut_message(message, registry)
        view.messages.append(message)
        return view

    limits = ", ".join(f"{spec.name}={spec.max_observation_chars}" for spec in registry)
    return Fold(f"model view ({limits})", _View, step)
