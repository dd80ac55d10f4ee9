"""Tree-of-Thoughts: the search's order, beam and backtracking, both generators and both
evaluators, its bounds and budgets, a resume, unreadable replies; the Game of 24's scorer,
suite and oracle.

The scripted model answers from the request it reads (the path shown, the candidate to
value, the lines to vote on), so the calls of a batch may come in any order.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from reasoning_graphs.bench.catalog import resolve_suites
from reasoning_graphs.bench.game24 import check, solve
from reasoning_graphs.bench.runner import BenchSettings, Cell, run_cell
from reasoning_graphs.bench.scorers import score
from reasoning_graphs.bench.suite import SuiteError, Task
from reasoning_graphs.cli import exits, runs
from reasoning_graphs.cli import main as cli
from reasoning_graphs.graphs.tot import build_graph
from reasoning_graphs.graphs.tot.prompts import (
    ANSWER_REQUEST,
    NO_STEPS,
    PATH_JOIN,
    PROPOSE_REQUEST,
    SAMPLE_REQUEST,
    VALUE_REQUEST,
    VOTE_REQUEST,
)
from reasoning_graphs.testing import ScriptedChatModel
from tests.helpers.cli_driver import run_cli

QUESTION = "Reach the goal."
PROPOSALS: dict[tuple[str, ...], list[tuple[str, bool]]] = {
    (): [("A", False), ("B", False), ("C", False)],
    ("A",): [("A1", True), ("A2", False)],
    ("B",): [("B1", False), ("B2", False)],
    ("B", "B1"): [("B1x", True)],
}
VERDICTS = {"A": "likely", "B": "sure", "C": "impossible", "A1": "sure", "A2": "likely"}
"""Anything not named here is judged impossible."""
CLOSING = "My best guess."
"""The reply to the closing call of an honest stop."""


def _literal_after(template: str, field: str) -> str:
    """The fixed text of ``template`` right after ``{field}`` (up to the next field)."""
    rest = template.split("{" + field + "}", 1)[1]
    return rest.split("{", 1)[0]


PROPOSE_MARK = _literal_after(PROPOSE_REQUEST, "path").strip()
SAMPLE_MARK = _literal_after(SAMPLE_REQUEST, "path").strip()
VALUE_MARK = _literal_after(VALUE_REQUEST, "path").strip()
VOTE_MARK = _literal_after(VOTE_REQUEST, "problem").strip()


def steps_shown(text: str) -> tuple[str, ...]:
    """The steps of the path a request shows."""
    block = text.split(":\n", 1)[1].split("\n\n", 1)[0]
    if block == NO_STEPS:
        return ()
    return tuple(line.split(". ", 1)[1] for line in block.splitlines())


def responder(
    proposals: Mapping[tuple[str, ...], list[tuple[str, bool]]] = PROPOSALS,
    verdicts: Mapping[str, str] = VERDICTS,
    ballots: Sequence[int] = (),
) -> Callable[[list[BaseMessage]], Any]:
    """A model's replies as a function of the request (see the module docstring)."""
    cast = iter(ballots)

    def reply(messages: list[BaseMessage]) -> Any:
        text = messages[-1].text
        if text.endswith(ANSWER_REQUEST):
            return {"answer": steps_shown(text)[-1]}
        if VOTE_MARK in text:
            return {"reason": "Closest.", "choice": next(cast)}
        if VALUE_MARK in text:
            candidate = text.split(VALUE_MARK, 1)[1].split("\n", 1)[0].strip()
            return {"reason": "Judged.", "verdict": verdicts.get(candidate, "impossible")}
        found = proposals.get(steps_shown(text), [])
        if text.endswith(SAMPLE_MARK):
            step, solves = found[0] if found else ("stuck", False)
            return {"step": step, "solves": solves}
        if PROPOSE_MARK in text:
            return {"steps": [{"step": step, "solves": solves} for step, solves in found]}
        return CLOSING

    return reply


def model_of(reply: Callable[[list[BaseMessage]], Any]) -> ScriptedChatModel:
    return ScriptedChatModel(script=[reply], cycle=True)


def ask(question: str = QUESTION) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def levels(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [event for event in state["trajectory"] if event["kind"] == "tot_level"]


def texts(state: Mapping[str, Any], ids: Sequence[int]) -> list[str]:
    return [state["search"]["thoughts"][i]["text"] for i in ids]


def answer_of(state: Mapping[str, Any]) -> str:
    return str(state["messages"][-1].content)


def test_a_level_keeps_the_best_beam_and_the_next_grows_from_each_of_them() -> None:
    model = model_of(responder())
    graph = build_graph(model, breadth=3, depth=2, beam=2)

    state = graph.invoke(ask())

    first, second = levels(state)
    assert texts(state, first["kept"]) == ["B", "A"]  # sure before likely; C dropped
    assert first["calls"] == 1 + 3  # one proposal, three values
    assert second["calls"] == 2 + 4  # a proposal from each kept state, four values
    assert texts(state, second["kept"]) == ["A1", "A2"]  # B's children are impossible
    assert answer_of(state) == "A1"
    assert state["outcome"] == {"status": "answered"}
    assert second["total"] + 1 == len(model.calls)  # the answer is the one call after


def test_a_level_judged_impossible_goes_back_to_the_previous_levels_next_best() -> None:
    graph = build_graph(model_of(responder()), breadth=3, depth=3, beam=1)

    state = graph.invoke(ask())

    first, second, third = levels(state)
    assert texts(state, first["kept"]) == ["B"]
    assert second["backtracked"]
    assert texts(state, second["kept"]) == ["A"]
    assert texts(state, third["kept"]) == ["A1"]  # it says it solves: the search ends
    assert state["outcome"] == {"status": "answered"}
    assert answer_of(state) == "A1"


def test_a_thought_that_solves_ends_the_search_before_its_depth() -> None:
    proposals = {(): [("Done", True)]}
    model = model_of(responder(proposals, {"Done": "sure"}))

    state = build_graph(model, breadth=2, depth=5).invoke(ask())

    assert len(levels(state)) == 1
    assert len(model.calls) == 3  # propose, value, answer
    assert answer_of(state) == "Done"


def test_nothing_left_to_grow_ends_honestly_with_a_closing_answer() -> None:
    proposals = {(): [("C", False)]}
    model = model_of(responder(proposals))
    graph = build_graph(model, breadth=1, depth=2)

    state = graph.invoke(ask())

    assert state["outcome"]["status"] == "incomplete"
    assert "no thought" in state["outcome"]["reason"]


def test_the_sample_generator_asks_breadth_calls_per_state_and_votes_pick_the_beam() -> None:
    proposals = {(): [("S", False)], ("S",): [("T", True)]}
    model = model_of(responder(proposals, ballots=[1, 9, 1, 1, 1, 1]))  # 9 is no candidate
    graph = build_graph(
        model, breadth=3, depth=2, generator="sample", evaluator="vote", votes=3, max_model_calls=20
    )

    state = graph.invoke(ask())

    first, second = levels(state)
    assert first["calls"] == 3 + 3  # three samples (one distinct step), three votes
    thought = state["search"]["thoughts"][first["kept"][0]]
    assert thought["text"] == "S"
    assert thought["score"] == 2.0
    assert second["calls"] == 3 + 3
    assert answer_of(state) == "T"


def test_the_proposal_generator_makes_one_call_per_state_however_broad() -> None:
    model = model_of(responder())
    state = build_graph(model, breadth=3, depth=1, beam=1).invoke(ask())

    proposals = [call for call in model.calls if call.tools == ["Proposals"]]
    assert len(proposals) == 1
    assert levels(state)[0]["calls"] == 4


def test_votes_compare_whole_lines_of_steps() -> None:
    model = model_of(responder(ballots=[2, 2, 2, 1, 1, 1]))
    graph = build_graph(model, breadth=3, depth=2, beam=2, evaluator="vote", votes=3)

    state = graph.invoke(ask())

    vote_prompts = [call.messages[-1].text for call in model.calls if call.tools == ["Ballot"]]
    assert f"B{PATH_JOIN}B1" in vote_prompts[-1]
    assert texts(state, levels(state)[0]["kept"]) == ["B", "A"]


def test_a_run_may_narrow_the_search_but_not_widen_it() -> None:
    model = model_of(responder())
    graph = build_graph(model, breadth=2, depth=2, beam=1)

    state = graph.invoke(ask(), context={"breadth": 5, "depth": 1})

    assert len(levels(state)) == 1  # depth lowered
    assert levels(state)[0]["calls"] == 1 + 2  # breadth not raised: two candidates valued
    with pytest.raises(ValueError, match="beam"):
        graph.invoke(ask(), context={"beam": 0})
    with pytest.raises(ValueError, match="evaluator"):
        graph.invoke(ask(), context={"evaluator": "guess"})


def test_build_options_out_of_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="breadth"):
        build_graph(model_of(responder()), breadth=0)
    with pytest.raises(ValueError, match="generator"):
        build_graph(model_of(responder()), generator="dream")


def test_a_spent_budget_ends_honestly_with_the_best_path_so_far() -> None:
    model = model_of(responder())
    graph = build_graph(model, breadth=3, depth=3, beam=1, max_model_calls=4)

    state = graph.invoke(ask())

    outcome = state["outcome"]
    assert outcome["status"] == "incomplete"
    assert "4 model calls" in outcome["reason"]
    assert "B" in outcome["note"]  # the best path so far is the note's evidence
    assert len(model.calls) <= 5  # at most one closing call past the budget


def test_unreadable_replies_give_no_candidate_and_no_traceback() -> None:
    model = ScriptedChatModel(script=["I cannot format this."], cycle=True)
    graph = build_graph(model, breadth=2, depth=2)

    state = graph.invoke(ask())

    assert state["outcome"]["status"] == "incomplete"
    assert state["messages"][-1].content


def garbled_for(unreadable: set[str], reply: Callable[[list[BaseMessage]], Any]) -> Any:
    """``reply``, but a value request about a candidate in ``unreadable`` gets no verdict."""

    def replies(messages: list[BaseMessage]) -> Any:
        text = messages[-1].text
        if VALUE_MARK in text:
            candidate = text.split(VALUE_MARK, 1)[1].split("\n", 1)[0].strip()
            if candidate in unreadable:
                return "maybe?"
        return reply(messages)

    return replies


def test_an_unreadable_verdict_ranks_below_every_candidate_read_as_possible() -> None:
    reply = garbled_for({"A"}, responder(verdicts={"B": "likely", "C": "impossible"}))

    state = build_graph(model_of(reply), breadth=3, depth=1, beam=2).invoke(ask())

    kept = texts(state, levels(state)[0]["kept"])
    assert kept == ["B", "A"]  # A, unread, after B, read as likely; C, impossible, dropped
    narrow = build_graph(model_of(reply), breadth=3, depth=1, beam=1).invoke(ask())
    assert texts(narrow, levels(narrow)[0]["kept"]) == ["B"]


def test_an_unreadable_verdict_is_never_kept_alone() -> None:
    reply = garbled_for({"A"}, responder(verdicts={"B": "impossible", "C": "impossible"}))

    state = build_graph(model_of(reply), breadth=3, depth=2, beam=2).invoke(ask())

    assert levels(state)[0]["kept"] == []  # the only possible ones were read impossible
    assert state["outcome"]["status"] == "incomplete"


def test_a_level_none_of_whose_evaluations_is_read_ends_the_search_honestly() -> None:
    reply = garbled_for({"A", "B", "C"}, responder())

    state = build_graph(model_of(reply), breadth=3, depth=2, beam=2).invoke(ask())

    (level,) = levels(state)  # no second level grows from unjudged thoughts
    assert level["kept"] == []
    outcome = state["outcome"]
    assert outcome["status"] == "incomplete"
    assert "level 1" in outcome["reason"]
    assert answer_of(state) not in {"A", "B", "C"}  # no answer rests on an unjudged thought


def test_a_vote_with_no_ballot_read_ends_the_search_honestly() -> None:
    reply = responder()

    def garbled_votes(messages: list[BaseMessage]) -> Any:
        return "all of them" if VOTE_MARK in messages[-1].text else reply(messages)

    graph = build_graph(model_of(garbled_votes), breadth=3, depth=2, evaluator="vote", votes=2)
    state = graph.invoke(ask())

    assert len(levels(state)) == 1
    assert state["outcome"]["status"] == "incomplete"


def test_a_resumed_search_redoes_no_finished_level() -> None:
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "tot-resume"}}
    reply = responder()

    def crashes_on_level_two(messages: list[BaseMessage]) -> Any:
        if steps_shown(messages[-1].text):
            raise RuntimeError("the process died")
        return reply(messages)

    first = build_graph(
        model_of(crashes_on_level_two), checkpointer=saver, breadth=3, depth=2, beam=1
    )
    with pytest.raises(RuntimeError):
        first.invoke(ask(), config)

    second_model = model_of(reply)
    second = build_graph(second_model, checkpointer=saver, breadth=3, depth=2, beam=1)
    state = second.invoke(None, config)

    assert not [c for c in second_model.calls if not steps_shown(c.messages[-1].text)]
    assert [event["level"] for event in levels(state)] == [1, 2, 2]  # level 1 once; B's children
    # were impossible, so level 2 ran again from A
    assert state["outcome"] == {"status": "answered"}


def test_a_new_question_starts_a_new_search() -> None:
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "tot-two"}}
    graph = build_graph(model_of(responder()), checkpointer=saver, breadth=3, depth=1, beam=1)

    graph.invoke(ask(), config)
    state = graph.invoke(ask("Again."), config)

    assert state["search"]["turn"] == 2
    assert state["outcome"] == {"status": "answered"}
    assert answer_of(state) == "B"


# The Game of 24 ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "numbers", "solved"),
    [
        ("Answer: (8 - 4) * (7 - 1) = 24", [1, 4, 7, 8], True),
        ("8 / (3 - 8 / 3)", [3, 3, 8, 8], True),  # exact fractions
        ("(8 - 4) * (7 - 1)", [1, 4, 7, 9], False),  # other numbers
        ("8 * 3", [1, 1, 3, 8], False),  # not every number
        ("(8 - 4) * (7 - 1) * 1", [1, 4, 7, 8], False),  # a number twice
        ("8 + 4 + 7 + 1", [1, 4, 7, 8], False),  # not 24
        ("24 / (1 - 1) + 4 - 4", [1, 1, 4, 24], False),  # divides by zero
        ("8 ** 1 * 3", [1, 3, 8], False),  # no powers
        ("__import__('os').getcwd()", [1, 4, 7, 8], False),  # no code
        ("I cannot find one.", [1, 4, 7, 8], False),
    ],
)
def test_the_game24_scorer(answer: str, numbers: list[int], solved: bool) -> None:
    task = Task(
        id="g", question="?", answer="", scorer="game24", scorer_options={"numbers": numbers}
    )
    assert score(task, answer).correct is solved


def test_a_game24_task_without_its_numbers_is_refused() -> None:
    with pytest.raises(SuiteError):
        score(Task(id="g", question="?", answer="1+23", scorer="game24"), "1+23")


def test_every_game24_puzzle_is_solvable_and_its_gold_solves_it() -> None:
    (suite,) = resolve_suites(["game24"])
    assert len(suite.tasks) == 20
    for task in suite.tasks:
        numbers = task.scorer_options["numbers"]
        assert len(numbers) == 4
        assert all(1 <= n <= 13 for n in numbers)
        assert solve(numbers) is not None
        assert check(task.answer, numbers)[0]


@pytest.mark.parametrize("pattern", ["tot", "cot"])
def test_the_oracle_plays_game24_and_the_levels_count_every_call(pattern: str) -> None:
    (suite,) = resolve_suites(["game24"])
    task = suite.tasks[3]  # 3 3 8 8: fractions on the way
    record = run_cell(Cell(suite=suite, task=task, pattern=pattern), BenchSettings())

    assert record.correct, (record.error, record.answer, record.detail)
    if pattern == "tot":
        last = [event for event in record.trajectory if event["kind"] == "tot_level"][-1]
        assert last["total"] + 1 == record.model_calls == 3 * (1 + 2) + 1


def test_the_command_shows_each_level_and_what_it_kept(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(cli.DB_ENV, str(tmp_path / "threads.sqlite"))
    model = model_of(responder())
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    ask_cli = ("run", QUESTION, "--pattern", "tot")

    code, out, _ = run_cli(monkeypatch, capsys, *ask_cli)
    _, json_out, _ = run_cli(monkeypatch, capsys, *ask_cli, "--json")

    assert code == exits.ANSWERED
    lines = [line for line in out.splitlines() if line.startswith("Level ")]
    assert len(lines) == 3
    assert '"B" (sure)' in lines[0]
    assert '"A" (likely)' in lines[1]  # B's children were impossible
    assert '"A1" (sure)' in lines[2]
    events = [json.loads(line) for line in json_out.splitlines()]
    shown = [e for e in events if e["event"] == "level"]
    assert [(e["level"], [t["text"] for t in e["kept"]]) for e in shown] == [
        (1, ["B"]),
        (2, ["A"]),  # the level of B's children, none kept: back to A, kept in reserve
        (2, ["A1"]),
    ]
    assert [e["backtracked"] for e in shown] == [False, True, False]


def test_the_level_progress_counts_only_finished_levels() -> None:
    """A level's line says which level is under way and what the levels before it cost;
    it never shows a count that stands still while the level runs."""
    graph = build_graph(model_of(responder()), breadth=3, depth=2, beam=2)

    reports = [chunk for chunk in graph.stream(ask(), stream_mode="custom") if "done" in chunk]

    first, second = (report["text"] for report in reports)
    assert "model calls" not in first  # none finished yet: no count of 0 that stands still
    assert "4 model calls" in second  # level 1's proposal and three values


def test_a_step_of_punctuation_alone_is_no_thought() -> None:
    proposals = {(): [("]}, {", True), ("][", False), ("A", False)], ("A",): [("A1", True)]}

    state = build_graph(model_of(responder(proposals)), breadth=3, depth=2).invoke(ask())

    assert [t["text"] for t in state["search"]["thoughts"][1:]] == ["A", "A1"]
    assert answer_of(state) == "A1"
