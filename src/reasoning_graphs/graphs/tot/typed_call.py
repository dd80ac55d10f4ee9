"""One typed model call of the search, and the reply it gave (``None`` when unreadable)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from reasoning_graphs.effects import Body
from reasoning_graphs.nodes.model.call import ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import RunScope
from reasoning_graphs.nodes.model.watch import SharedTokens
from reasoning_graphs.state import ThoughtEvent

Reply = TypeVar("Reply", bound=BaseModel)


def ask_typed(
    run: RunScope,
    prompt: Sequence[BaseMessage],
    schema: type[Reply],
    state: Mapping[str, Any],
    shared_tokens: SharedTokens | None = None,
) -> Body[tuple[Reply | None, ThoughtEvent]]:
    """Ask for a ``schema`` reply; one that cannot be read comes back as ``None``, its call
    still recorded."""
    request = ModelRequest(prompt=prompt, schema=schema, shared_tokens=shared_tokens)
    reply = yield from call_model(run, request, state)
    parsed = reply.parsed if isinstance(reply.parsed, schema) else None
    return parsed, reply.event
