"""A long run's steps read what was added since the step before, not the whole history.

Counted, not timed: how many history items the running folds read, and how many
bytes the checkpoints store, for runs of two lengths. Work that rescans the
history per step grows with the square of the run; what these tests allow
grows with its length.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.message import _messages_delta_reducer

from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.history import Fold, Indexed, folded
from reasoning_graphs.metadata import mark
from reasoning_graphs.nodes.guards.budget import question_spending
from reasoning_graphs.nodes.guards.loops import STALE_ROUNDS, stale_rounds, stale_stop, tool_rounds
from reasoning_graphs.nodes.model.tokens import estimate_tokens, prompt_tokens
from reasoning_graphs.nodes.model.window import sliding_window
from reasoning_graphs.question import (
    latest_request,
    question_answers,
    question_bookkeeping,
    question_number,
    this_question,
)
from reasoning_graphs.state import CallDecision, add_messages_batches, extend_record
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers.counted_calls import counted_calls


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def script(rounds: int) -> list[Any]:
    return [*(tool_call("echo", text=f"round {n}") for n in range(rounds)), "done"]


def run(rounds: int, checkpointer: Any = None, thread: str = "long") -> dict[str, Any]:
    graph = build_graph(
        ScriptedChatModel(script=script(rounds)), [echo], checkpointer, max_model_calls=None
    )
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 10 * rounds + 50}
    state = graph.invoke({"messages": [HumanMessage("Echo each round.")]}, config)
    assert sum(isinstance(m, ToolMessage) for m in state["messages"]) == rounds
    assert state["messages"][-1].content == "done"
    return state


@pytest.fixture
def items_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts every history item a running fold reads during a run."""
    count = [0]
    original = Indexed.fold

    def counting(self: Indexed, fold: Fold[Any]) -> Any:
        def step(summary: Any, item: Any) -> Any:
            count[0] += 1
            return fold.step(summary, item)

        return original(self, Fold(fold.name, fold.start, step))

    monkeypatch.setattr(Indexed, "fold", counting)
    return count


def test_the_folds_read_each_item_a_bounded_number_of_times(items_read: list[int]) -> None:
    run(30)
    short = items_read[0]
    items_read[0] = 0
    run(90)
    # three times the rounds: about three times the reading (nine times if each step rescanned)
    assert items_read[0] < 3.6 * short


def test_checkpoints_grow_with_the_run_not_with_its_square(tmp_path: Path) -> None:
    sizes = []
    for rounds in (30, 90):
        path = tmp_path / f"{rounds}.sqlite"
        with sqlite3.connect(path, check_same_thread=False) as connection:
            run(rounds, SqliteSaver(connection))
            blobs = connection.execute(
                "SELECT COALESCE(SUM(LENGTH(checkpoint)), 0) FROM checkpoints"
            ).fetchone()[0]
            writes = connection.execute("SELECT SUM(LENGTH(value)) FROM writes").fetchone()[0]
        sizes.append(blobs + writes)
    assert sizes[1] < 4.5 * sizes[0]  # the whole list saved at each step: about 9 times


def test_a_resumed_thread_reads_the_same_history_and_spending() -> None:
    saver = InMemorySaver()
    state = run(12, saver, thread="resumed")
    graph = build_graph(ScriptedChatModel(script=["again"]), [echo], saver, max_model_calls=None)
    config = {"configurable": {"thread_id": "resumed"}}
    restored = graph.get_state(config).values
    assert [m.id for m in restored["messages"]] == [m.id for m in state["messages"]]
    assert question_spending(restored) == question_spending(state)
    assert len(restored["trajectory"]) == len(state["trajectory"])
    # a follow-up question starts its own count
    after = graph.invoke({"messages": [HumanMessage("And now?")]}, config)
    assert question_number(after["messages"]) == 2
    assert question_spending(after).calls == 1


def test_a_replaced_message_starts_the_folds_over() -> None:
    call = AIMessage("", id="a1", tool_calls=[{"name": "echo", "args": {"text": "x"}, "id": "c1"}])
    first = ToolMessage("", tool_call_id="c1", id="t1", status="success")
    history = Indexed([HumanMessage("q", id="h1"), call, first])
    assert list(question_answers(history)) == ["c1"]
    assert tool_rounds(history)[0].answers == [first]

    replaced = ToolMessage("found it", tool_call_id="c1", id="t1", status="success")
    edited = Indexed([*history[:2], replaced], extends=history)
    assert tool_rounds(edited)[0].answers == [replaced]
    assert question_answers(edited)["c1"] is replaced
    # the first list still reads its own items
    assert tool_rounds(history)[0].answers == [first]


def test_an_older_list_is_folded_from_its_own_items() -> None:
    count = Fold("count", int, lambda total, item: total + 1)
    older = Indexed(["a", "b"])
    newer = Indexed([*older, "c", "d"], extends=older)
    assert folded(newer, count) == 4
    assert folded(older, count) == 2  # the shared fold has read past it: read afresh
    assert folded(newer, count) == 4


def test_staleness_from_the_running_rounds_matches_a_full_count() -> None:
    messages: list[Any] = [HumanMessage("q", id="h")]
    texts = ["a", "b", "a", "b", "a", "c", "c", "c"]
    for number, text in enumerate(texts):
        call_id = f"c{number}"
        calls = [{"name": "echo", "args": {"text": text}, "id": call_id}]
        messages.append(AIMessage("", id=f"a{number}", tool_calls=calls))
        messages.append(ToolMessage(text, tool_call_id=call_id, id=f"t{number}", status="success"))
    history: Indexed = Indexed([])
    for end in range(1, len(messages) + 1):
        history = Indexed(messages[:end], extends=history)
        expected = stale_rounds(tool_rounds(list(messages[:end])))
        outcome = stale_stop({"messages": history}, limit=1)
        wanted = STALE_ROUNDS.format(rounds=expected) if expected else None
        assert (outcome["reason"] if outcome else None) == wanted


def test_a_prompt_ending_with_the_conversation_reads_its_running_token_count() -> None:
    state = run(5)
    conversation = state["messages"]
    prompt = [SystemMessage("You are terse."), *conversation]
    assert isinstance(conversation, Indexed)
    assert prompt_tokens(prompt, conversation) == estimate_tokens(prompt)
    assert prompt_tokens(prompt[:3], conversation) == estimate_tokens(prompt[:3])


@pytest.mark.parametrize("keep", [1, 2, 5, 9])
def test_the_window_read_from_the_running_layout_is_the_window_of_the_whole_prompt(
    keep: int,
) -> None:
    system = SystemMessage("sys")
    messages: list[Any] = [HumanMessage("first question", id="h0")]
    for number in range(12):
        calls = [{"name": "echo", "args": {"n": number}, "id": f"c{number}-{k}"} for k in (1, 2)]
        messages.append(AIMessage(f"step {number}", id=f"a{number}", tool_calls=calls))
        for k, call in enumerate(calls):
            decision: CallDecision = "approved" if number % 5 == 2 and k == 0 else "auto"
            metadata = {"decision": decision}
            messages.append(
                ToolMessage(
                    "r", tool_call_id=call["id"], id=f"t{number}-{k}", response_metadata=metadata
                )
            )
        if number == 6:
            messages.append(HumanMessage("second question", id="h1"))
    history: Indexed = Indexed([])
    for end in range(1, len(messages) + 1):
        history = Indexed(messages[:end], extends=history)
        prompt = [system, *history]
        question = latest_request(history)
        assert sliding_window(prompt, keep, question, history) == sliding_window(
            list(prompt), keep, question
        )


def test_the_conversation_reducer_merges_as_langgraph_does() -> None:
    writes: list[list[Any]] = [
        [HumanMessage("q", id="h")],
        [AIMessage("a", id="a1"), AIMessage("b", id="a2")],
        [AIMessage("a, edited", id="a1")],  # a known id replaces
        [RemoveMessage(id="a2"), ToolMessage("r", tool_call_id="c", id="t1")],
        [AIMessage("c", id="a3"), AIMessage("c twice", id="a3")],  # the later one wins
        [("user", "a follow-up, written as a pair")],
    ]
    ours: list[Any] = Indexed([])
    theirs: list[Any] = []
    for write in writes:
        ours = add_messages_batches(ours, [write])
        theirs = _messages_delta_reducer(theirs, [write])
        assert [(m.type, m.text) for m in ours] == [(m.type, m.text) for m in theirs]
    assert isinstance(ours, Indexed)


def test_the_current_questions_records_are_read_incrementally(items_read: list[int]) -> None:
    records: list[Any] = Indexed([])
    conversation: list[Any] = Indexed([])
    for turn in range(1, 41):
        conversation = Indexed([*conversation, HumanMessage(f"q{turn}")], extends=conversation)
        for step in range(3):
            records = extend_record(records, [{"turn": turn, "step": step}])
            mine = this_question(records, conversation)
            assert [r["step"] for r in mine] == list(range(step + 1))
    # each record and message read by the folds about once (every step rescanning: 40 times)
    everything = len(records) + len(conversation)
    assert everything <= items_read[0] < 3 * everything
    assert this_question(list(records), list(conversation)) == mine  # plain lists agree


def test_bookkeeping_of_the_turn_is_read_incrementally(items_read: list[int]) -> None:
    history: list[Any] = Indexed([HumanMessage("q")])
    for wave in range(1, 31):
        marked = AIMessage("", response_metadata=mark("rewoo", "work", vars={}))
        answer = ToolMessage("r", tool_call_id=f"c{wave}")
        history = Indexed([*history, marked, answer], extends=history)
        assert len(question_bookkeeping(history, "rewoo", "work")) == wave
    assert question_bookkeeping(history, "rewoo", "plan") == ()
    assert len(history) <= items_read[0] < 3 * len(history)
    follow_up = Indexed([*history, HumanMessage("again")], extends=history)
    assert question_bookkeeping(follow_up, "rewoo", "work") == ()  # a new question starts clean


def rewoo_run(steps: int) -> dict[str, Any]:
    from reasoning_graphs.graphs.rewoo import build_graph as build_rewoo

    chain = [
        {"var": f"E{n}", "tool": "echo", "args": {"text": f"#E{n - 1} > {n}"}, "reason": "next"}
        for n in range(1, steps + 1)
    ]
    chain[0]["args"] = {"text": "1"}
    graph = build_rewoo(ScriptedChatModel(script=[{"steps": chain}, "done"]), [echo])
    config = {"recursion_limit": 10 * steps + 50}
    state = graph.invoke({"messages": [HumanMessage("Echo the chain.")]}, config)
    assert sum(isinstance(m, ToolMessage) for m in state["messages"]) == steps
    return state


def test_a_long_rewoo_plan_reads_its_history_a_bounded_number_of_times(
    items_read: list[int],
) -> None:
    rewoo_run(10)
    short = items_read[0]
    items_read[0] = 0
    rewoo_run(30)
    assert items_read[0] < 3.6 * short


def test_a_round_appends_its_messages_without_reindexing_the_conversation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import reasoning_graphs.state as state_module

    merges = counted_calls(monkeypatch, state_module, "merge_message_writes")
    counts = []
    for rounds in (10, 30):
        merges[0] = 0
        run(rounds)
        counts.append(merges[0])
    # only the first write (the question, onto an empty list) merges; every round appends
    assert counts[0] == counts[1] <= 1
