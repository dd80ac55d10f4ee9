"""A model turn of the ReAct loop between the middleware's ``before_model`` and
``after_model`` hooks, as ``create_agent`` runs them: ``before_model`` in the
middleware's order, then the turn, then ``after_model`` in reverse order.

Each hook reads the state as the hooks before it and the turn left it, and what it
returns is written with the turn's own update (messages by id, so a hook that rewrites
a message replaces it). A hook that jumps to ``"end"`` ends the question there,
incomplete: no model call follows (the turn's when the jump comes before it, nor a
closing one), the outcome's reason names the middleware and quotes its last words,
and the answer is those words or our note of why it stopped and what the tools gave.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

from langchain_core.messages import AIMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.metadata import answered
from reasoning_graphs.middleware import AFTER_MODEL, BEFORE_MODEL
from reasoning_graphs.nodes.guards.honest import incomplete_note
from reasoning_graphs.nodes.model.prompt_hooks import (
    IN_TURN,
    ended_reason,
    last_words,
    run_hook,
    text_changes,
    write_update,
)
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.question import successful_observations
from reasoning_graphs.state import AgentState, AgentUpdate, Outcome

Turn = Callable[[AgentState], Body[AgentUpdate]]


def around_turn(setup: AgentSetup, turn: Turn) -> Turn:
    """``turn`` between the setup's ``before_model`` and ``after_model`` hooks; ``turn``
    itself when no middleware writes them."""
    before, after = setup.before_model_hooks, setup.after_model_hooks
    if not before and not after:
        return turn

    def hooked_turn(state: AgentState) -> Body[AgentUpdate]:
        seen: dict[str, Any] = dict(state)
        written: dict[str, Any] = {}
        for middleware in before:
            if (yield from run_hook(middleware, BEFORE_MODEL, seen, written)):
                return ended_by(middleware, seen, written)
        changes = text_changes(state["messages"], seen["messages"])
        update = yield from turn(cast(AgentState, {**seen, IN_TURN: changes}))
        write_update(seen, written, update)
        if not _replied(update):  # no model call was made: nothing for after_model
            return written  # type: ignore[return-value]
        for middleware in after:
            if (yield from run_hook(middleware, AFTER_MODEL, seen, written)):
                return ended_by(middleware, seen, written)
        return written  # type: ignore[return-value]

    return hooked_turn


def _replied(update: Mapping[str, Any]) -> bool:
    return any(isinstance(m, AIMessage) for m in update.get("messages") or ())


def ended_by(middleware: Any, seen: Mapping[str, Any], written: dict[str, Any]) -> AgentUpdate:
    """The node's writes when ``middleware`` jumped to the end: its last words (when it
    wrote an AI message) become the incomplete answer, else our note does."""
    words = last_words(written)
    reason = ended_reason(middleware, words)
    note = incomplete_note(reason, successful_observations(seen["messages"]))
    outcome: Outcome = {
        "status": "incomplete",
        "reason": reason,
        "concluded": True,
        "ended": True,
        "note": note,
    }
    if words is not None:
        final = words.model_copy(update={"response_metadata": answered(outcome)})
    else:
        final = AIMessage(content=note, response_metadata=answered(outcome))
    return {
        **written,  # type: ignore[typeddict-item]
        "messages": [*(written.get("messages") or []), final],
        "outcome": outcome,
        "to_run": [],
    }
