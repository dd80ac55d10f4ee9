"""The question's budgets: model calls (``max_steps``) and tokens, over the whole question.

Every model call of a question counts — thinking, planning, judging, the
closing answer, and the calls of a subgraph run per plan step or trial (they
arrive as ``earlier_calls``). A node checks :func:`budget_stop` before a model
call; once a budget is spent, one last call may conclude the question
(:func:`may_conclude`), and no more. So a run makes at most one model call past
its budget, whatever the pattern.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import accumulate
from typing import Any

from reasoning_graphs.context import Limits
from reasoning_graphs.nodes.turn import question_calls
from reasoning_graphs.state import Outcome

STEP_LIMIT = "reached the limit of {limit} model steps"
TOKEN_LIMIT = "spent {used} of {budget} tokens"


def budget_stop(state: Mapping[str, Any], limits: Limits) -> Outcome | None:
    """An incomplete outcome when a budget is spent, else ``None`` (a ``None`` budget never is)."""
    calls = question_calls(state)
    return _spent(limits, len(calls), sum(calls))


def calls_past_budget(state: Mapping[str, Any], limits: Limits) -> int:
    """How many model calls of the question started when a budget was already spent."""
    tokens_before = list(accumulate(question_calls(state), initial=0))[:-1]
    return sum(
        _spent(limits, index, tokens) is not None for index, tokens in enumerate(tokens_before)
    )


def _spent(limits: Limits, calls: int, tokens: int) -> Outcome | None:
    """Why ``calls`` model calls costing ``tokens`` have spent a budget, if they have."""
    if limits.max_steps is not None and calls >= limits.max_steps:
        return {"status": "incomplete", "reason": STEP_LIMIT.format(limit=limits.max_steps)}
    if limits.token_budget is not None and tokens >= limits.token_budget:
        reason = TOKEN_LIMIT.format(used=tokens, budget=limits.token_budget)
        return {"status": "incomplete", "reason": reason}
    return None


def may_conclude(state: Mapping[str, Any], limits: Limits) -> bool:
    """Whether the one closing call past the budget is still to be made."""
    return calls_past_budget(state, limits) == 0


def affordable_batch(state: Mapping[str, Any], limits: Limits, wanted: int, cost: int) -> int:
    """How many of ``wanted`` concurrent samples, ``cost`` model calls each, the step budget
    allows, ending at most one call past it — at least one, so a search always moves.

    Token use is known only after a call, so a batch started under the token budget
    may end past it by the batch's own calls.
    """
    if limits.max_steps is None:
        return wanted
    left = limits.max_steps - len(question_calls(state))
    return max(1, min(wanted, (left + 1) // cost))


def question_bounds(state: Mapping[str, Any]) -> dict[str, Any]:
    """What a subgraph run for one step or trial must honour of its question:
    the rejections so far and the model calls already made."""
    return {"rejected": dict(state.get("rejected") or {}), "earlier_calls": question_calls(state)}
