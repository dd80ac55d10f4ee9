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

from langchain_core.messages import AnyMessage, ToolMessage

from reasoning_graphs.history import Fold, Indexed, folded
from reasoning_graphs.tools.execute import cut_message
from reasoning_graphs.tools.registry import ToolRegistry


def model_view(messages: Sequence[AnyMessage], registry: ToolRegistry) -> Sequence[AnyMessage]:
    """``messages`` with each long observation cut for the model (read only)."""
    return folded(messages, _view_fold(registry))


def _view_fold(registry: ToolRegistry) -> Fold[Indexed]:
    def step(view: Indexed, message: AnyMessage) -> Indexed:
        view.append(cut_message(message, registry) if isinstance(message, ToolMessage) else message)
        return view

    limits = ", ".join(f"{spec.name}={spec.max_observation_chars}" for spec in registry)
    return Fold(f"model view ({limits})", Indexed, step)
