"""The Tree-of-Thoughts search as plain data, and the pure functions that step it.

The search lives in the graph state, so it must survive a checkpoint and a new
process: thoughts are dicts that name their parent by id (no object links, no
methods), and every function here returns a new search instead of changing the
one it was given. A level is one round of breadth-first search: every state of
the frontier grows candidates, the evaluator scores them, and the best ``beam``
become the next frontier. The candidates a level keeps beyond its beam wait in
reserve, so a level judged impossible throughout goes back to them instead of
failing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from typing_extensions import TypedDict

from reasoning_graphs.context import run_settings

ROOT = 0
"""Id of the root: the question itself, before any thought."""

Generator = Literal["sample", "propose"]
Evaluator = Literal["value", "vote"]
Verdict = Literal["sure", "likely", "impossible"]

VERDICT_SCORES: dict[str, float] = {"sure": 1.0, "likely": 0.5, "impossible": 0.0}
"""The value evaluator's verdicts as scores; an impossible candidate is dropped."""
UNREADABLE = "unreadable"
"""The verdict of a candidate whose evaluation could not be read (a value reply, or every
ballot of a vote): it ranks below every candidate whose evaluation was read."""

Status = Literal["root", "candidate", "frontier", "reserve", "expanded", "dropped"]


@dataclass(frozen=True)
class TotSettings:
    """How wide and deep the search goes, and how it generates and scores thoughts: the
    graph's values of the options that :class:`~reasoning_graphs.graphs.tot.context.TotContext`
    declares (and means)."""

    breadth: int
    depth: int
    beam: int
    votes: int
    generator: Generator
    evaluator: Evaluator

    def for_run(self, context: Any) -> TotSettings:
        """These settings as a run's context sets them: counts only come down."""
        return run_settings(self, context)


class Thought(TypedDict):
    """One node of the search.

    Attributes:
        id: Index in the search's thought list.
        parent: The parent's id; ``None`` for the root.
        depth: Thoughts from the root to this one.
        text: The thought as the model wrote it.
        solves: The model says this thought completes the solution.
        score: The evaluator's score (verdict value, or votes won); ``None`` until scored.
        verdict: The value evaluator's verdict, or ``""``.
        status: Where the thought stands in the search.
    """

    id: int
    parent: int | None
    depth: int
    text: str
    solves: bool
    score: float | None
    verdict: str
    status: Status


class LevelCost(TypedDict):
    """The model calls of one level, as the trajectory's ``tot_level`` event reports them."""

    level: int
    calls: int


class Search(TypedDict):
    """The search of one question.

    Attributes:
        turn: The question's number: tells a new question from a resumed search.
        thoughts: Every thought, indexed by id.
        solution: The thought that completed the solution, when one did.
        levels: The calls each finished level made.
        done: The search is over (solved, or at its depth): the answer comes next.
    """

    turn: int
    thoughts: list[Thought]
    solution: int | None
    levels: list[LevelCost]
    done: bool


class Candidate(TypedDict):
    """A thought the generator proposed, before it joins the search."""

    parent: int
    text: str
    solves: bool


def plant(turn: int) -> Search:
    """A new search: the root alone, which is the frontier."""
    root = Thought(
        id=ROOT, parent=None, depth=0, text="", solves=False, score=None, verdict="", status="root"
    )
    return Search(
        turn=turn, thoughts=[{**root, "status": "frontier"}], solution=None, levels=[], done=False
    )


def frontier(search: Search) -> list[Thought]:
    """The states the next level grows from."""
    return [t for t in search["thoughts"] if t["status"] == "frontier"]


def candidates(search: Search) -> list[Thought]:
    """The thoughts of the level under way, scored or not."""
    return [t for t in search["thoughts"] if t["status"] == "candidate"]


def add_candidates(search: Search, found: list[Candidate]) -> Search:
    """The search with ``found`` added under their parents (a repeat of a sibling once)."""
    thoughts = list(search["thoughts"])
    seen = {(t["parent"], _key(t["text"])) for t in thoughts}
    for candidate in found:
        key = (candidate["parent"], _key(candidate["text"]))
        if not key[1] or key in seen:
            continue
        seen.add(key)
        parent = thoughts[candidate["parent"]]
        thoughts.append(
            Thought(
                id=len(thoughts),
                parent=parent["id"],
                depth=parent["depth"] + 1,
                text=candidate["text"].strip(),
                solves=candidate["solves"],
                score=None,
                verdict="",
                status="candidate",
            )
        )
    return {**search, "thoughts": thoughts}


def scored(search: Search, scores: dict[int, tuple[float, str]]) -> Search:
    """The search with each candidate's ``(score, verdict)`` filled in."""
    thoughts: list[Thought] = []
    for thought in search["thoughts"]:
        if thought["id"] in scores:
            score, verdict = scores[thought["id"]]
            thought = {**thought, "score": score, "verdict": verdict}
        thoughts.append(thought)
    return {**search, "thoughts": thoughts}


@dataclass(frozen=True)
class Step:
    """What choosing a level's beam did.

    Attributes:
        search: The search after it.
        kept: The new frontier's ids, best first.
        backtracked: Every candidate was dropped, and the frontier came from reserve.
        unjudged: No evaluation of the level could be read: the level is dropped and the
            search ends there, since nothing it holds was judged.
    """

    search: Search
    kept: list[int]
    backtracked: bool
    unjudged: bool = False


def choose_beam(search: Search, beam: int) -> Step:
    """Keep the best ``beam`` candidates as the next frontier and the rest in reserve.

    Impossible candidates are dropped, and one whose evaluation was unreadable ranks below
    every candidate read as possible (it is kept only behind one of them, never alone). When
    none is left, the frontier comes from the deepest level that still has states in
    reserve, best first; when there is none, the frontier is empty and the search is over.
    A level none of whose evaluations could be read is dropped whole, with no frontier.
    """
    level = candidates(search)
    readable = [t for t in level if t["verdict"] != UNREADABLE]
    unjudged = bool(level) and not readable
    alive = [t for t in readable if t["verdict"] != "impossible"]
    if alive:
        alive += [t for t in level if t["verdict"] == UNREADABLE]
    backtracked = not alive and not unjudged
    if backtracked:
        waiting = [t for t in search["thoughts"] if t["status"] == "reserve"]
        deepest = max((t["depth"] for t in waiting), default=0)
        alive = [t for t in waiting if t["depth"] == deepest]
    ranked = sorted(
        alive, key=lambda t: (t["verdict"] == UNREADABLE, -(t["score"] or 0.0), t["id"])
    )
    kept = [t["id"] for t in ranked[:beam]]
    waiting_ids = {t["id"] for t in ranked[beam:]}
    status: dict[int, Status] = {t["id"]: "dropped" for t in level}
    status.update({t["id"]: "expanded" for t in frontier(search)})
    status.update(dict.fromkeys(waiting_ids, "reserve"))
    status.update(dict.fromkeys(kept, "frontier"))
    thoughts: list[Thought] = [
        {**t, "status": status.get(t["id"], t["status"])} for t in search["thoughts"]
    ]
    return Step({**search, "thoughts": thoughts}, kept, backtracked, unjudged)


def best_solution(search: Search, kept: list[int]) -> int | None:
    """The best kept thought that says it completes the solution."""
    return next((i for i in kept if search["thoughts"][i]["solves"]), None)


def best_state(search: Search) -> Thought | None:
    """The thought the answer rests on: the solution, else the best of the frontier, else the
    deepest best-scored thought found (``None`` before any)."""
    if search["solution"] is not None:
        return search["thoughts"][search["solution"]]
    scored_ones = [
        t for t in search["thoughts"] if t["score"] is not None and t["verdict"] != UNREADABLE
    ]
    ahead = frontier(search) or scored_ones
    ahead = [t for t in ahead if t["id"] != ROOT]
    return min(ahead, key=lambda t: (-t["depth"], -(t["score"] or 0.0), t["id"]), default=None)


def path(search: Search, thought_id: int) -> list[Thought]:
    """The thoughts from the root's first child down to ``thought_id``."""
    chain = []
    node: int | None = thought_id
    while node is not None and node != ROOT:
        chain.append(search["thoughts"][node])
        node = search["thoughts"][node]["parent"]
    return chain[::-1]


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()
