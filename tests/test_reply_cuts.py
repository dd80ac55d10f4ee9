"""A reply that says one passage over and over ends after its first saying, and the closing
answer has a length cap of its own: watched as it streams, on any model, the text said so
far kept as the reply. Right replies that repeat a little, or draw a rule, are kept whole."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reasoning_graphs.graphs import react
from reasoning_graphs.nodes.model.watch import REPEATS
from reasoning_graphs.nodes.steps.answer_turn import ANSWER_TOKENS
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import calculator

SENTENCE = "The answer is 42 because six times seven is 42. "
CALL = tool_call("calculator", expression="6*7")


def closing_answer(reply: str, face: str) -> dict[str, Any]:
    """A run whose one allowed call is spent on the calculator, so ``reply`` is the closing
    answer (asked with tools off)."""
    model = ScriptedChatModel(script=[CALL, reply])
    graph = react.build_graph(model, tools=[calculator()], max_model_calls=1)
    question = {"messages": [("user", "What is 6*7?")]}
    if face == "async":
        return asyncio.run(graph.ainvoke(question))
    return graph.invoke(question)


def answer(reply: str, **limits: Any) -> str:
    """The answer of a run whose model replies ``reply`` at once (watched: a token budget)."""
    model = ScriptedChatModel(script=[reply])
    graph = react.build_graph(model, tools=[calculator()], token_budget=100_000, **limits)
    return str(graph.invoke({"messages": [("user", "Tell me.")]})["messages"][-1].content)


@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_closing_answer_that_repeats_itself_ends_after_its_first_saying(face: str) -> None:
    state = closing_answer("It is 42. " + SENTENCE * 40, face)

    assert state["messages"][-1].content == "It is 42. " + SENTENCE.strip()
    assert state["outcome"]["status"] == "incomplete"  # the budget's stop, as before


def test_a_reply_that_repeats_itself_in_a_turn_is_cut_too() -> None:
    assert answer("Well. " + SENTENCE * 25) == "Well. " + SENTENCE.strip()


@pytest.mark.parametrize("face", ["sync", "async"])
def test_a_closing_answer_stuck_on_a_short_passage_is_cut_once_it_runs_long(face: str) -> None:
    stuck = {"No, " + "I'm sorry, " * 90: "No, I'm sorry", "144." + "0" * 900: "144.0"}
    for reply, kept in stuck.items():
        assert closing_answer(reply, face)["messages"][-1].content == kept


def test_a_reply_asked_with_tools_on_keeps_a_long_short_run() -> None:
    zeros = "[" + ", ".join(["0"] * 120) + "]"
    assert answer(zeros) == zeros


def test_a_right_reply_that_repeats_a_little_is_kept_whole() -> None:
    some = "Yes. " + SENTENCE * (REPEATS - 1) + "That is all."
    ruled = "Results\n" + "-" * 120 + "\n42\n" + "-" * 120 + "\nend"
    laughs = "ha " * 60 + "that is funny."

    for reply in (some, ruled, laughs):
        assert answer(reply) == reply


@pytest.mark.parametrize("face", ["sync", "async"])
def test_the_closing_answer_stops_at_its_cap_and_keeps_what_it_said(face: str) -> None:
    flood = " ".join(f"step{n}" for n in range(4 * ANSWER_TOKENS))

    state = closing_answer(flood, face)

    kept = state["messages"][-1].content
    assert flood.startswith(kept)
    assert len(kept.split()) < len(flood.split()) // 2  # cut near the cap, not at the end
    assert state["outcome"]["status"] == "incomplete"
