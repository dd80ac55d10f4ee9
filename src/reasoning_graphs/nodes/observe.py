"""``observe``: close a turn's tool round and check the budgets before thinking again."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from reasoning_graphs.context import Limits
from reasoning_graphs.nodes.setup import AgentSetup
from reasoning_graphs.nodes.turn import steps_used, tokens_used
from reasoning_graphs.state import Outcome

STEP_LIMIT = "reached the limit of {limit} model steps"
TOKEN_LIMIT = "spent {used} of {budget} tokens"


def budget_stop(state: Mapping[str, Any], limits: Limits) -> Outcome | None:
    """An incomplete outcome when a budget is spent, else ``None`` (a ``None`` budget never is)."""
    if limits.max_steps is not None and steps_used(state) >= limits.max_steps:
        return {"status": "incomplete", "reason": STEP_LIMIT.format(limit=limits.max_steps)}
    used = tokens_used(state)
    if limits.token_budget is not None and used >= limits.token_budget:
        reason = TOKEN_LIMIT.format(used=used, budget=limits.token_budget)
        return {"status": "incomplete", "reason": reason}
    return None


def make_observe(setup: AgentSetup) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Build the ``observe`` node for ``setup``."""

    def observe(state: dict[str, Any]) -> dict[str, Any]:
        outcome = state.get("outcome") or budget_stop(state, setup.for_run().limits)
        return {"pending": [], "outcome": outcome}

    return observe
