"""``evaluate``: score the level's candidates, by value or by vote.

``value`` asks one call per candidate whether its path can still reach a
correct solution — sure, likely or impossible — scored 1, 0.5 and 0; an
impossible candidate is later dropped. ``vote`` shows every candidate of the
level, numbered, to ``votes`` calls that each choose the most promising; a
candidate scores the votes it won. An unreadable verdict scores 0 and ranks the
candidate below every one read as possible, and an unreadable or out-of-range
ballot counts for no one: neither passes for a good grade. A level none of whose
evaluations could be read ends the search, incomplete (``select``). A spent
budget scores nothing and ends the search.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.tot.prompts import PATH_JOIN, STEP_LINE, VALUE_REQUEST, VOTE_REQUEST
from reasoning_graphs.graphs.tot.replies import Ballot, Valuation
from reasoning_graphs.graphs.tot.search import (
    UNREADABLE,
    VERDICT_SCORES,
    Search,
    Thought,
    TotSettings,
    candidates,
    path,
    scored,
)
from reasoning_graphs.graphs.tot.state import SearchUpdate, TotState
from reasoning_graphs.graphs.tot.typed_call import ask_typed
from reasoning_graphs.graphs.tot.view import path_prompt, render_path
from reasoning_graphs.nodes.guards.budget import budget_stop
from reasoning_graphs.nodes.model.batch import plan_batch
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.model.tokens import estimate_tokens
from reasoning_graphs.question import latest_request
from reasoning_graphs.state import ThoughtEvent

Scores = dict[int, tuple[float, str]]


def make_evaluate(
    setup: AgentSetup, settings: TotSettings
) -> Callable[[TotState], Body[SearchUpdate]]:
    """Build the ``evaluate`` node."""

    def evaluate(state: TotState) -> Body[SearchUpdate]:
        run = setup.for_run()
        stop = budget_stop(state, run.limits)
        if stop is not None:  # the level's candidates stay unscored
            return {"outcome": stop}
        tot = settings.for_run(run.context)
        search = state["search"]
        level = candidates(search)
        if not level:
            return {}
        problem = latest_request(state["messages"])
        if tot.evaluator == "value":
            scores, events, records = yield from _values(run, state, problem, search, level)
        else:
            scores, events, records = yield from _votes(
                run, state, problem, search, level, tot.votes
            )
        return {"search": scored(search, scores), "trajectory": [*events, *records]}

    return evaluate


Graded = Body[tuple[Scores, list[ThoughtEvent], Sequence[Mapping[str, Any]]]]


def _values(
    run: RunScope, state: TotState, problem: str, search: Search, level: list[Thought]
) -> Graded:
    """One value call per candidate, on the path above it."""
    prompts = [
        path_prompt(
            run.setup.system_prompt,
            VALUE_REQUEST.format(
                path=render_path(problem, path(search, t["parent"] or 0)), candidate=t["text"]
            ),
        )
        for t in level
    ]
    largest = max(estimate_tokens(prompt) for prompt in prompts)
    batch = plan_batch(state, run.limits, len(prompts), prompt_tokens=largest)
    gathered = yield from batch.gather(
        [
            ask_typed(run, prompt, Valuation, state, batch.shared_tokens)
            for prompt in prompts[: batch.size]
        ],
        lambda result: [result[1]],
    )
    scores: Scores = {}
    for thought, result in zip(level, gathered.results, strict=False):
        if result is not None:
            verdict = result[0].verdict if result[0] else UNREADABLE
            scores[thought["id"]] = (VERDICT_SCORES.get(verdict, 0.0), verdict)
    return scores, [event for _, event in gathered.finished], gathered.records


def _votes(
    run: RunScope, state: TotState, problem: str, search: Search, level: list[Thought], votes: int
) -> Graded:
    """``votes`` calls, each choosing among all the level's candidates (each shown as the
    whole line of steps it ends, since a beam's candidates may have different parents)."""
    lines = [PATH_JOIN.join(step["text"] for step in path(search, t["id"])) for t in level]
    choices = "\n".join(
        STEP_LINE.format(number=number, text=line) for number, line in enumerate(lines, 1)
    )
    prompt = path_prompt(
        run.setup.system_prompt, VOTE_REQUEST.format(problem=problem, choices=choices)
    )
    batch = plan_batch(state, run.limits, votes, prompt_tokens=estimate_tokens(prompt))
    gathered = yield from batch.gather(
        [ask_typed(run, prompt, Ballot, state, batch.shared_tokens) for _ in range(batch.size)],
        lambda result: [result[1]],
    )
    won = [0] * len(level)
    for ballot, _ in gathered.finished:
        if ballot is not None and 1 <= ballot.choice <= len(level):
            won[ballot.choice - 1] += 1
    verdict = UNREADABLE if gathered.finished and not any(won) else ""  # no ballot was read
    scores: Scores = {t["id"]: (float(count), verdict) for t, count in zip(level, won, strict=True)}
    return scores, [event for _, event in gathered.finished], gathered.records
