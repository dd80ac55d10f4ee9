"""``select`` and ``expand``: pick the most promising leaf by UCT, then sample its next actions.

``select`` makes no model call: it starts a fresh tree for a new question and
walks the tree by UCT; when no branch can grow any more it ends the search.
``expand`` asks the model for the leaf's next step several times at once,
with tools bound and the leaf's trajectory as the model's own earlier turns;
each reply is one tool call or a final answer, and identical replies become
one child.
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage
from langgraph.runtime import get_runtime

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.lats.state import LatsState, SelectUpdate, TreeUpdate, selected_leaf
from reasoning_graphs.graphs.lats.tree import (
    Candidate,
    SearchSettings,
    expand,
    expansions,
    messages_of,
    new_tree,
    path,
    select_leaf,
)
from reasoning_graphs.nodes.guards.advice import advice_for, advised
from reasoning_graphs.nodes.model.batch import plan_batch
from reasoning_graphs.nodes.model.call import ModelReply, ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.model.tokens import estimate_tokens
from reasoning_graphs.question import question_number
from reasoning_graphs.state import Node, Outcome

EXHAUSTED = "every branch ended in an answer or reached the depth limit of {depth} actions"


CALLS_PER_CANDIDATE = 2
"""A candidate step costs its sample and the judge's grade of it."""


def make_select(settings: SearchSettings) -> Node[LatsState]:
    """Build the ``select`` node: a leaf to expand, or an incomplete outcome when none is left."""

    def select(state: LatsState) -> SelectUpdate:
        search = settings.for_run(get_runtime().context)
        turn = question_number(state["messages"])
        tree = state.get("tree")
        if tree is None or tree["turn"] != turn:
            tree = new_tree(turn, tree)
        leaf = select_leaf(tree, search)
        outcome: Outcome | None = None
        if leaf is None:
            outcome = {"status": "incomplete", "reason": EXHAUSTED.format(depth=search.max_depth)}
        return {"tree": tree, "selected": leaf, "outcome": outcome}

    return select


def make_expand(
    setup: AgentSetup, settings: SearchSettings
) -> Callable[[LatsState], Body[TreeUpdate]]:
    """Build the ``expand`` node: ``settings.candidates`` concurrent samples of the next step,
    a batch (:mod:`~reasoning_graphs.nodes.model.batch`): fewer when the question's
    model-call budget has room for fewer (each is sampled and judged), sharing the tokens
    left."""

    def expand_node(state: LatsState) -> Body[TreeUpdate]:
        run = setup.for_run()
        tree, leaf = state["tree"], selected_leaf(state)
        branch = [*state["messages"], *messages_of(path(tree, leaf))]
        # the guards' advice on the branch's latest round (a repeat that returned the same)
        prompt = advised([*setup.system, *branch], advice_for(branch, run.limits))
        wanted = settings.for_run(run.context).candidates
        batch = plan_batch(
            state,
            run.limits,
            wanted,
            prompt_tokens=estimate_tokens(prompt),
            calls_each=CALLS_PER_CANDIDATE,
        )
        request = ModelRequest(
            prompt=prompt, tools=run.usable_tools(state), shared_tokens=batch.shared_tokens
        )
        gathered = yield from batch.gather(
            [call_model(run, request, state) for _ in range(batch.size)], lambda r: r.events
        )
        replies: list[ModelReply] = gathered.finished
        candidates = [_candidate(reply.message) for reply in replies]
        grown = expand(tree, leaf, [c for c in candidates if c])
        step = expansions(grown)
        events = [{**reply.event, "step": step, "node": leaf} for reply in replies]
        return {"tree": grown, "trajectory": [*events, *gathered.records]}

    return expand_node


def _candidate(reply: AIMessage) -> Candidate | None:
    """The reply's action: its first tool call, else its text as an answer; ``None`` if empty.

    One action per node keeps each branch a single line of steps; a reply that
    calls several tools contributes its first.
    """
    if reply.tool_calls:
        return Candidate(thought=reply.text.strip(), call=reply.tool_calls[0], answer=None)
    text = reply.text.strip()
    return Candidate(thought="", call=None, answer=text) if text else None
