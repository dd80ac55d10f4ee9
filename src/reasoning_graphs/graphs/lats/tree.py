"""The LATS search tree as plain data, and the pure functions that walk and update it.

The tree lives in the graph state, so it must survive a checkpoint and a new
process: it is a list of node dicts that refer to their parent by id (no
object links, no methods), and every function here returns a new tree rather
than changing the one it was given. A node is one action — a tool call with
its observation, or a final answer — and the path from the root to it is the
trajectory the model and the judge read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.messages.tool import ToolCall
from typing_extensions import NotRequired, TypedDict

from reasoning_graphs.context import run_settings
from reasoning_graphs.metadata import settled
from reasoning_graphs.question import call_signature
from reasoning_graphs.state import CallDecision

ROOT = 0
"""Id of the root: the question itself, before any action."""


@dataclass(frozen=True)
class SearchSettings:
    """How wide, deep and long the search may go, and what counts as solved: the graph's
    values of the options that :class:`~reasoning_graphs.graphs.lats.context.LatsContext`
    declares (and means), and the build's ``exploration`` (the UCT constant)."""

    candidates: int
    max_expansions: int
    max_depth: int
    threshold: float
    exploration: float

    def for_run(self, context: Any) -> SearchSettings:
        """These settings as a run's context sets them: a run may narrow the search, and
        choose its threshold, but never widen it."""
        return run_settings(self, context)


class LatsNode(TypedDict):
    """One node of the tree.

    Attributes:
        id: Index of the node in the tree's node list.
        parent: The parent's id; ``None`` for the root.
        depth: Actions from the root to this node.
        thought: The text the model wrote with the action.
        call: The tool call (its id names the search and the node), or ``None`` for
            an answer.
        answer: The final answer, or ``None`` for a tool call.
        observation: What the call returned (or why it did not run); ``None`` until acted.
        status: ``"success"`` or ``"error"`` of the observation.
        decision: How the call was settled (``auto``, ``approved``, ``rejected``…).
        nonce, seal: For a call a person cleared, the proof that they did
            (:mod:`reasoning_graphs.nodes.steps.seal`).
        visits: How often a value was backpropagated through the node.
        value_sum: The sum of those values; the node's value is the mean.
        score: The judge's score of the trajectory ending here (0..1).
        feedback: The judge's short reason.
        terminal: A final answer: never expanded.
        expanded: Children have been sampled (possibly none).
    """

    id: int
    parent: int | None
    depth: int
    thought: str
    call: ToolCall | None
    answer: str | None
    observation: str | None
    status: Literal["success", "error"] | None
    decision: CallDecision | None
    nonce: NotRequired[str]
    seal: NotRequired[str]
    visits: int
    value_sum: float
    score: float | None
    feedback: str
    terminal: bool
    expanded: bool


class NodeChange(TypedDict, total=False):
    """The fields of a node that acting and judging fill in (see :func:`update_nodes`)."""

    call: ToolCall
    observation: str
    status: Literal["success", "error"]
    decision: CallDecision
    nonce: str
    seal: str
    score: float
    feedback: str


class LatsTree(TypedDict):
    """The tree of one question.

    Attributes:
        turn: The question's turn: tells a new question from a resumed search.
        search: The thread's searches so far, this one included; it prefixes the
            call ids, so a later question's calls (and the references of their cut
            observations) never reuse an earlier question's.
        nodes: Every node, indexed by id.
    """

    turn: int
    search: int
    nodes: list[LatsNode]


class Candidate(TypedDict):
    """One sampled action before it becomes a node: a tool call or a final answer."""

    thought: str
    call: ToolCall | None
    answer: str | None


def new_tree(turn: int, previous: LatsTree | None = None) -> LatsTree:
    """A tree holding only the root, for question number ``turn``, after the ``previous`` search."""
    search = previous["search"] + 1 if previous else 1
    root = _node(ROOT, None, 0, Candidate(thought="", call=None, answer=None), search=search)
    return {"turn": turn, "search": search, "nodes": [root]}


def children(tree: LatsTree, node_id: int) -> list[LatsNode]:
    """The nodes whose parent is ``node_id``, in the order they were added."""
    return [node for node in tree["nodes"] if node["parent"] == node_id]


def path(tree: LatsTree, node_id: int) -> list[LatsNode]:
    """The nodes from the root's first child down to ``node_id`` (the root has no action)."""
    nodes = tree["nodes"]
    found: list[LatsNode] = []
    current: int | None = node_id
    while current is not None and current != ROOT:
        found.append(nodes[current])
        current = nodes[current]["parent"]
    return found[::-1]


def call_of(node: LatsNode) -> ToolCall:
    """The tool call of an action node (an answer node has none)."""
    call = node["call"]
    if call is None:
        raise ValueError(f"node {node['id']} is an answer, not a tool call")
    return call


def messages_of(nodes: Sequence[LatsNode]) -> list[AnyMessage]:
    """A trajectory as the model's own turns: each call with its observation, then any answer."""
    messages: list[AnyMessage] = []
    for node in nodes:
        call = node["call"]
        if call is None:
            messages.append(AIMessage(content=node["answer"] or node["thought"]))
            continue
        messages.append(AIMessage(content=node["thought"], tool_calls=[call]))
        if node["observation"] is not None:
            messages.append(
                ToolMessage(
                    node["observation"],
                    tool_call_id=call["id"],
                    name=call["name"],
                    status=node["status"] or "success",
                    response_metadata=settled(node["decision"] or "auto"),
                )
            )
    return messages


def uct(node: LatsNode, parent_visits: int, exploration: float) -> float:
    """Upper confidence bound: mean value plus a bonus for rarely visited nodes.

    An unvisited node scores infinity, so every child is tried once before any is
    tried twice.
    """
    if node["visits"] == 0:
        return math.inf
    mean = node["value_sum"] / node["visits"]
    return mean + exploration * math.sqrt(math.log(max(parent_visits, 1)) / node["visits"])


def expandable(tree: LatsTree, node_id: int, max_depth: int) -> bool:
    """Whether the subtree under ``node_id`` still has a leaf the search may expand."""
    node = tree["nodes"][node_id]
    if node["terminal"] or node["depth"] >= max_depth:
        return False
    if not node["expanded"]:
        return True
    return any(expandable(tree, child["id"], max_depth) for child in children(tree, node_id))


def select_leaf(tree: LatsTree, settings: SearchSettings) -> int | None:
    """Walk from the root by UCT to a leaf to expand; ``None`` when every branch is spent.

    Only children whose subtree can still grow compete, so a solved-looking but
    finished branch (a final answer, the depth limit) does not trap the walk.
    Ties go to the lower id, which keeps the walk deterministic.
    """
    if not expandable(tree, ROOT, settings.max_depth):
        return None
    current = tree["nodes"][ROOT]
    while current["expanded"]:
        open_children = [
            child
            for child in children(tree, current["id"])
            if expandable(tree, child["id"], settings.max_depth)
        ]
        current = max(
            open_children,
            key=lambda child: (uct(child, current["visits"], settings.exploration), -child["id"]),
        )
    return current["id"]


def candidate_key(candidate: Candidate) -> str:
    """What makes two sampled actions the same: the call's signature, or the answer's words."""
    call = candidate["call"]
    if call is not None:
        return "call:" + call_signature(call["name"], call["args"])
    return "answer:" + " ".join((candidate["answer"] or "").lower().split())


def expand(tree: LatsTree, parent_id: int, candidates: Sequence[Candidate]) -> LatsTree:
    """Add one child per distinct candidate under ``parent_id`` and mark it expanded.

    Identical candidates collapse into one, and the children are ordered by
    their key, so the tree depends on which actions were sampled, not on the
    order concurrent samples happened to arrive in. Each call's id is made of
    the search's number and the node's id, whatever id the model gave it:
    unique in the thread and the same on every replay.
    """
    distinct = {candidate_key(c): c for c in reversed(candidates)}  # first sample's text wins
    nodes = [node.copy() for node in tree["nodes"]]
    parent = nodes[parent_id]
    parent["expanded"] = True
    for key in sorted(distinct):
        depth = parent["depth"] + 1
        nodes.append(_node(len(nodes), parent_id, depth, distinct[key], search=tree["search"]))
    return {**tree, "nodes": nodes}


def update_nodes(tree: LatsTree, changes: dict[int, NodeChange]) -> LatsTree:
    """The tree with some nodes' fields replaced (observations, scores)."""
    nodes = [
        {**node, **changes[node["id"]]} if node["id"] in changes else node for node in tree["nodes"]
    ]
    # a node with some of its fields replaced is still a node, which the spread cannot show
    return {**tree, "nodes": nodes}  # type: ignore[typeddict-item]


def backpropagate(tree: LatsTree, node_ids: Sequence[int]) -> LatsTree:
    """Add each scored node's score to its own and every ancestor's value, one visit each."""
    nodes = [node.copy() for node in tree["nodes"]]
    for node_id in node_ids:
        value = nodes[node_id]["score"] or 0.0
        current: int | None = node_id
        while current is not None:
            nodes[current]["visits"] += 1
            nodes[current]["value_sum"] += value
            current = nodes[current]["parent"]
    return {**tree, "nodes": nodes}


def expansions(tree: LatsTree) -> int:
    """How many nodes have been expanded so far."""
    return sum(node["expanded"] for node in tree["nodes"])


def best_answer(tree: LatsTree) -> LatsNode | None:
    """The highest-scored final answer (the earliest among equals), if any was scored."""
    answers = [n for n in tree["nodes"] if n["terminal"] and n["score"] is not None]
    return max(answers, key=lambda n: (n["score"], -n["id"]), default=None)


def best_node(tree: LatsTree) -> LatsNode | None:
    """The highest-scored action of any kind; among equals the deepest, which got further."""
    scored = [n for n in tree["nodes"] if n["score"] is not None]
    return max(scored, key=lambda n: (n["score"], n["depth"], -n["id"]), default=None)


def _node(
    node_id: int, parent: int | None, depth: int, candidate: Candidate, *, search: int
) -> LatsNode:
    call = candidate["call"]
    if call is not None:
        call_id = f"lats-{search}-{node_id}"
        call = ToolCall(name=call["name"], args=dict(call["args"]), id=call_id, type="tool_call")
    return LatsNode(
        id=node_id,
        parent=parent,
        depth=depth,
        thought=candidate["thought"],
        call=call,
        answer=candidate["answer"],
        observation=None,
        status=None,
        decision=None,
        visits=0,
        value_sum=0.0,
        score=None,
        feedback="",
        terminal=call is None and parent is not None,
        expanded=False,
    )
