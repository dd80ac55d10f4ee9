"""``generate``: grow a level of candidate thoughts from every state of the frontier.

``propose`` asks one call per state for ``breadth`` different next steps (good
where steps are constrained, as in a number puzzle); ``sample`` asks ``breadth``
independent calls per state for one step each (good where steps are rich, and
diverse only with a sampling model). The calls of a level are one batch, kept
to the budgets (:mod:`~reasoning_graphs.nodes.model.batch`). A reply that cannot
be read gives no candidate; a repeated step counts once.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.tot.prompts import PROPOSE_REQUEST, SAMPLE_REQUEST
from reasoning_graphs.graphs.tot.replies import NextStep, Proposals
from reasoning_graphs.graphs.tot.search import (
    Candidate,
    Search,
    Thought,
    TotSettings,
    add_candidates,
    frontier,
    path,
    plant,
)
from reasoning_graphs.graphs.tot.state import SearchUpdate, TotState
from reasoning_graphs.graphs.tot.typed_call import ask_typed
from reasoning_graphs.graphs.tot.view import path_prompt, render_path
from reasoning_graphs.nodes.model.batch import plan_batch
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.model.tokens import estimate_tokens
from reasoning_graphs.question import latest_request, question_number


def current_search(state: TotState) -> Search:
    """The question's search: the one in the state, or a new one for a new question."""
    turn = question_number(state["messages"])
    search = state.get("search")
    return search if search is not None and search["turn"] == turn else plant(turn)


def make_generate(
    setup: AgentSetup, settings: TotSettings
) -> Callable[[TotState], Body[SearchUpdate]]:
    """Build the ``generate`` node."""

    def generate(state: TotState) -> Body[SearchUpdate]:
        run = setup.for_run()
        tot = settings.for_run(run.context)
        search = current_search(state)
        problem = latest_request(state["messages"])
        system = run.setup.system_prompt
        parents: list[Thought] = []
        prompts = []
        for parent in frontier(search):
            shown = render_path(problem, path(search, parent["id"]))
            if tot.generator == "propose":
                parents.append(parent)
                prompts.append(
                    path_prompt(system, PROPOSE_REQUEST.format(path=shown, count=tot.breadth))
                )
            else:
                prompt = path_prompt(system, SAMPLE_REQUEST.format(path=shown))
                parents.extend([parent] * tot.breadth)
                prompts.extend([prompt] * tot.breadth)
        schema = Proposals if tot.generator == "propose" else NextStep
        largest = max((estimate_tokens(prompt) for prompt in prompts), default=0)
        batch = plan_batch(state, run.limits, len(prompts), prompt_tokens=largest)
        gathered = yield from batch.gather(
            [
                ask_typed(run, prompt, schema, state, batch.shared_tokens)
                for prompt in prompts[: batch.size]
            ],
            lambda result: [result[1]],
        )
        found: list[Candidate] = []
        for parent, result in zip(parents, gathered.results, strict=False):
            if result is not None:
                found.extend(_candidates(parent["id"], result[0], tot.breadth))
        events = [event for _, event in gathered.finished]
        return {
            "search": add_candidates(search, found),
            "trajectory": [*events, *gathered.records],
            "outcome": None,  # an earlier question's outcome is not this one's
        }

    return generate


def _candidates(parent: int, reply: BaseModel | None, breadth: int) -> list[Candidate]:
    """The steps a reply gives, at most ``breadth`` (none when it could not be read). A step
    without a letter or a digit (``]}, {``: a small model's JSON punctuation written as a
    value) says nothing and is no thought."""
    steps = reply.steps if isinstance(reply, Proposals) else []
    if isinstance(reply, NextStep):
        steps = [reply]
    said = [step for step in steps if any(char.isalnum() for char in step.step)]
    return [Candidate(parent=parent, text=step.step, solves=step.solves) for step in said[:breadth]]
