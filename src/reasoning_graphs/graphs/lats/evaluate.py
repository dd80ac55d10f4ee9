"""``evaluate`` and ``backpropagate``: value each new child with a model judge, then back it up.

The judge reads the question and the child's whole trajectory as text and
returns a typed score from 0 to 1 with a short reason
(:class:`~reasoning_graphs.nodes.steps.judge.Judgement`, via
``with_structured_output``, so the embedded model's grammar mode works too);
the children are judged concurrently, a batch kept to the budgets
(:mod:`~reasoning_graphs.nodes.model.batch`): a child left unjudged scores nothing.
``backpropagate`` adds each score along its path and decides whether the
search goes on: a final answer at or above the threshold solves the question;
spent expansions or tokens end it incomplete.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import get_runtime

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.lats.prompts import (
    FINAL_ANSWER,
    LATS_JUDGE_REQUEST,
    LATS_JUDGE_SYSTEM,
    NO_STEPS,
    NOT_FINISHED,
    STEP_LINE,
)
from reasoning_graphs.graphs.lats.state import EvaluationEvent, LatsState, TreeUpdate, selected_leaf
from reasoning_graphs.graphs.lats.tree import (
    LatsNode,
    NodeChange,
    SearchSettings,
    backpropagate,
    children,
    expansions,
    path,
    update_nodes,
)
from reasoning_graphs.nodes.guards.budget import budget_stop
from reasoning_graphs.nodes.guards.untrusted import as_data
from reasoning_graphs.nodes.model.batch import plan_batch
from reasoning_graphs.nodes.model.setup import AgentSetup
from reasoning_graphs.nodes.model.tokens import estimate_tokens
from reasoning_graphs.nodes.steps.judge import grade
from reasoning_graphs.question import describe_call, latest_request, question_number
from reasoning_graphs.state import Node, Outcome

EXPANSIONS_SPENT = "spent the budget of {limit} expansions"


def make_evaluate(setup: AgentSetup) -> Callable[[LatsState], Body[TreeUpdate]]:
    """Build the ``evaluate`` node: one judge call per unscored child of the selected leaf."""

    def evaluate(state: LatsState) -> Body[TreeUpdate]:
        run = setup.for_run()
        tree = state["tree"]
        unscored = [n for n in children(tree, selected_leaf(state)) if n["score"] is None]
        task = latest_request(state["messages"])
        prompts = [_judge_prompt(task, path(tree, node["id"])) for node in unscored]
        largest = max((estimate_tokens(prompt) for prompt in prompts), default=0)
        batch = plan_batch(state, run.limits, len(unscored), prompt_tokens=largest)
        gathered = yield from batch.gather(
            [grade(run, prompt, state, batch.shared_tokens) for prompt in prompts[: batch.size]],
            lambda result: [result[1]],
        )
        changes: dict[int, NodeChange] = {}
        events: list[dict[str, Any] | EvaluationEvent] = []
        step = expansions(tree)
        for node, graded in zip(unscored[: batch.size], gathered.results, strict=True):
            if graded is None:  # a budget stopped its judge
                continue
            judgement, thought = graded
            changes[node["id"]] = {"score": judgement["score"], "feedback": judgement["feedback"]}
            events.append({**thought, "step": step, "node": node["id"]})
            events.append(
                EvaluationEvent(
                    kind="evaluation",
                    turn=question_number(state["messages"]),
                    step=step,
                    node=node["id"],
                    score=judgement["score"],
                    feedback=judgement["feedback"],
                    terminal=node["terminal"],
                )
            )
        return {"tree": update_nodes(tree, changes), "trajectory": [*events, *gathered.records]}

    return evaluate


def make_backpropagate(setup: AgentSetup, settings: SearchSettings) -> Node[LatsState]:
    """Build the ``backpropagate`` node: back up the new scores, then stop or go on."""

    def backpropagate_node(state: LatsState) -> TreeUpdate:
        search = settings.for_run(get_runtime().context)
        tree = state["tree"]
        new = [n for n in children(tree, selected_leaf(state)) if n["visits"] == 0]
        tree = backpropagate(tree, [n["id"] for n in new])
        outcome: Outcome | None = None
        if any(n["terminal"] and (n["score"] or 0.0) >= search.threshold for n in new):
            outcome = {"status": "answered"}
        elif expansions(tree) >= search.max_expansions:
            reason = EXPANSIONS_SPENT.format(limit=search.max_expansions)
            outcome = {"status": "incomplete", "reason": reason}
        else:
            outcome = budget_stop(state, setup.for_run().limits)
        return {"tree": tree, "outcome": outcome}

    return backpropagate_node


def _judge_prompt(task: str, trajectory: Sequence[LatsNode]) -> list[BaseMessage]:
    """What the judge reads of one branch."""
    return [SystemMessage(LATS_JUDGE_SYSTEM), HumanMessage(render_trajectory(task, trajectory))]


def render_trajectory(task: str, trajectory: Sequence[LatsNode]) -> str:
    """The judge's view of a branch: the task, each step with its observation, the answer.

    Observations are tool output, so each is a data block naming its call.
    """
    steps = []
    ending = NOT_FINISHED
    for number, node in enumerate(trajectory, start=1):
        call = node["call"]
        if call is None:
            ending = FINAL_ANSWER.format(answer=node["answer"])
            continue
        thought = f"{node['thought']} " if node["thought"] else ""
        described = describe_call(call["name"], call["args"])
        observation = as_data(node["observation"] or "", source=described)
        steps.append(
            STEP_LINE.format(
                number=number, thought=thought, call=described, observation=observation
            )
        )
    return LATS_JUDGE_REQUEST.format(task=task, steps="\n".join(steps) or NO_STEPS, ending=ending)
