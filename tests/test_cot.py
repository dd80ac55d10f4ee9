"""Chain-of-Thought on a scripted model: answer extraction and self-consistency voting."""

from __future__ import annotations

import time
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from reasoning_graphs.graphs.cot import build_graph
from reasoning_graphs.graphs.cot.answer import Sample, extract_answer, majority
from reasoning_graphs.graphs.cot.prompts import COT_SYSTEM
from reasoning_graphs.metadata import outcome_of
from reasoning_graphs.testing import ScriptedChatModel
from tests.helpers.outcomes import without_note


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def test_one_chain_of_thought_gives_the_extracted_answer() -> None:
    reasoning = "23*17 = 391.\n391 + 4 = 395.\nAnswer: 395"
    model = ScriptedChatModel(script=[reasoning])
    graph = build_graph(model, tools=["ignored"])

    state = graph.invoke(ask("What is 23*17+4?"))

    final = state["messages"][-1]
    assert final.content == "395"
    assert final.response_metadata["reasoning"] == reasoning
    assert final.response_metadata["agreement"] == "1/1"
    assert (state["answer"], state["agreement"]) == ("395", "1/1")
    assert state["samples"] == [Sample(reasoning=reasoning, answer="395")]
    assert state["outcome"] == {"status": "answered"}
    assert model.prompts[0][0].content == COT_SYSTEM
    assert model.calls[0].tools == []  # no tools bound
    assert graph.name == "cot"


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("Thinking...\nAnswer: 42", "42"),
        ("Thinking...\n**Final Answer:** 42.", "42"),
        ("so the answer: `Paris`", "Paris"),
        ("Reasoning.\nThe answer is 17.", "17"),
        ("Therefore $\\boxed{12}$", "12"),
        ("Answer: 3\nWait, I was wrong.\nAnswer: 4", "4"),
        ("No marker at all\n\n  7 apples  ", "7 apples"),
        (
            "Code:\nAnswer:\n```python\ndef f():\n    return 1\n```",
            "```python\ndef f():\n    return 1\n```",
        ),
        ("", ""),
    ],
)
def test_answer_extraction_is_tolerant(text: str, answer: str) -> None:
    assert extract_answer(text) == answer


def test_self_consistency_picks_the_majority_and_reports_agreement() -> None:
    script = ["Answer: 395", "Answer: 391", "Answer: 395.", "The answer is 395", "Answer: 12"]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, samples=5)

    state = graph.invoke(ask("What is 23*17+4?"))

    final = state["messages"][-1]
    assert final.content == "395"
    assert final.response_metadata["agreement"] == "3/5"
    assert final.response_metadata["votes"] == {"395": 3, "391": 1, "12": 1}
    assert state["agreement"] == "3/5"
    assert len(state["samples"]) == 5
    assert sorted(e["sample"] for e in state["trajectory"]) == [1, 2, 3, 4, 5]


def test_votes_compare_normalised_answers_and_ties_go_to_the_first_seen() -> None:
    samples = [
        Sample(reasoning="", answer="Paris"),
        Sample(reasoning="", answer="1,000"),
        Sample(reasoning="", answer="paris"),
        Sample(reasoning="", answer="1000.0"),
        Sample(reasoning="", answer=""),
    ]
    vote = majority(samples)
    assert (vote["answer"], vote["count"], vote["total"]) == ("Paris", 2, 5)
    assert vote["votes"] == {"Paris": 2, "1,000": 2}
    assert majority(samples[1:])["answer"] == "1,000"


def test_samples_run_concurrently() -> None:
    model = ScriptedChatModel(script=["Answer: 1"], cycle=True, delay=0.3)
    graph = build_graph(model, samples=4)

    started = time.perf_counter()
    state = graph.invoke(ask("?"))

    assert time.perf_counter() - started < 0.9  # one after another would take 1.2 s
    assert state["agreement"] == "4/4"


def test_no_answer_at_all_is_incomplete() -> None:
    graph = build_graph(ScriptedChatModel(script=["", ""]), samples=2)

    state = graph.invoke(ask("?"))

    reason = "the model's reasoning gave no final answer"
    assert without_note(state["outcome"]) == {"status": "incomplete", "reason": reason}
    assert state["agreement"] == "0/2"
    final = state["messages"][-1]
    assert final.content == ""  # what the model wrote: nothing
    assert reason in outcome_of(final)["note"]


async def test_a_follow_up_question_reasons_over_the_conversation(thread: dict[str, Any]) -> None:
    model = ScriptedChatModel(script=["Answer: 4", "Doubling 4.\nAnswer: 8"])
    graph = build_graph(model, checkpointer=InMemorySaver())

    await graph.ainvoke(ask("What is 2+2?"), thread)
    state = await graph.ainvoke(ask("Double it."), thread)

    assert [m.content for m in state["messages"]] == ["What is 2+2?", "4", "Double it.", "8"]
    assert state["samples"] == [Sample(reasoning="Doubling 4.\nAnswer: 8", answer="8")]


def test_bad_sample_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="samples"):
        build_graph(ScriptedChatModel(), samples=0)
