"""LATS's ``finish``: the search's answer, with its score — complete or honestly not.

A solved search answers with the final answer that reached the threshold.
Otherwise the best-scored final answer found is returned as the model wrote
it, marked incomplete, with a note on its score and why the search stopped.
When no branch reached an answer at all, the shared
:func:`~reasoning_graphs.nodes.steps.finish.make_finish` asks the model once more,
tools off, along the best-scored branch, and gives that answer with the
branch's evidence.
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.runtime import get_runtime

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.lats.prompts import BELOW_THRESHOLD_NOTE
from reasoning_graphs.graphs.lats.state import LatsState
from reasoning_graphs.graphs.lats.tree import (
    SearchSettings,
    best_answer,
    best_node,
    messages_of,
    path,
)
from reasoning_graphs.metadata import answered
from reasoning_graphs.nodes.model.call import ModelReply
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.steps.finish import ask_with_tools_off, make_finish
from reasoning_graphs.question import successful_observations
from reasoning_graphs.state import AgentUpdate, Outcome

BEST_BRANCH = "{reason}; the best branch scored {score:.2f}"


def make_lats_finish(
    setup: AgentSetup, settings: SearchSettings
) -> Callable[[LatsState], Body[AgentUpdate]]:
    """Build the ``finish`` node of LATS."""
    from_best_branch = make_finish(setup, _ask_on_best_branch, _best_branch_evidence)

    def finish(state: LatsState) -> Body[AgentUpdate]:
        outcome: Outcome = state.get("outcome") or {"status": "incomplete", "reason": "stopped"}
        best = best_answer(state["tree"])
        if best is None:
            branch = best_node(state["tree"])
            if branch is not None:
                reason = BEST_BRANCH.format(reason=outcome.get("reason"), score=branch["score"])
                outcome = {**outcome, "reason": reason}
            with_reason: LatsState = {**state, "outcome": outcome}
            return (yield from from_best_branch(with_reason))
        shown = outcome
        if outcome["status"] != "answered":  # the note is shown beside the model's answer
            note = BELOW_THRESHOLD_NOTE.format(
                score=best["score"],
                threshold=settings.for_run(get_runtime().context).threshold,
                reason=outcome.get("reason"),
            )
            shown = {**outcome, "note": note}
        final = AIMessage(
            content=best["answer"] or "",
            response_metadata=answered(shown, lats={"node": best["id"], "score": best["score"]}),
        )
        return {"messages": [final], "outcome": outcome}

    return finish


def _best_branch(state: LatsState) -> list[AnyMessage]:
    """The best-scored branch as the model's own turns (none before anything was scored)."""
    node = best_node(state["tree"])
    return messages_of(path(state["tree"], node["id"])) if node else []


def _ask_on_best_branch(run: RunScope, state: LatsState, instruction: str) -> Body[ModelReply]:
    """The model, tools off, after the conversation and the best branch's steps."""
    branch_state: LatsState = {**state, "messages": [*state["messages"], *_best_branch(state)]}
    return (yield from ask_with_tools_off(run, branch_state, instruction))


def _best_branch_evidence(state: LatsState) -> list[tuple[str, str]]:
    """The best branch's successful tool results, for an answer the search did not find."""
    return successful_observations(_best_branch(state))
