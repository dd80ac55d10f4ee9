"""Batches of concurrent model calls keep to the question's budgets, on both faces.

Chain-of-Thought's samples and LATS's candidate steps and judges start
together. A batch starts no more calls than the model-call budget has left, and its
calls share the tokens left: once they are spent, every stream of the batch
stops, so the question ends within its token budget plus the one call a
question may make past it. A batch cut short says so in the trajectory and the
run still ends honestly; a batch that fits its budgets runs as it would
without them.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.graphs import cot, lats
from reasoning_graphs.graphs.lats.prompts import LATS_JUDGE_SYSTEM
from reasoning_graphs.nodes.model.call import CLOSING_TOKENS
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

FACES = pytest.mark.parametrize("face", ["sync", "async"])
QUESTION = "What is 23*17+4?"
CHAIN = "23*17 = 391, plus 4 is 395.\nAnswer: 395"
FLOOD = " ".join(["word"] * 5000)
"""A reply of 5,000 estimated tokens: far past every token budget below."""
NUMBERS = itertools.count()


def run(graph: CompiledStateGraph, face: str) -> dict[str, Any]:
    question = {"messages": [HumanMessage(QUESTION)]}
    if face == "sync":
        return graph.invoke(question)
    return asyncio.run(graph.ainvoke(question))


def call_costs(state: dict[str, Any]) -> list[int]:
    """The tokens of each model call of the question, as the budgets count them."""
    return [
        event["input_tokens"] + event["output_tokens"]
        for event in state["trajectory"]
        if event["kind"] == "thought"
    ]


def assert_within_budget_plus_one_call(state: dict[str, Any], budget: int) -> None:
    """Every model call but one fits in the budget, besides the closing answer of an
    incomplete question (capped apart), and none streams past one call's cap."""
    costs = call_costs(state)
    if state["outcome"]["status"] == "incomplete":
        costs = costs[:-1]
    assert sum(costs) - max(costs) <= budget
    outputs = [e["output_tokens"] for e in state["trajectory"] if e["kind"] == "thought"]
    assert max(outputs) <= CLOSING_TOKENS


def batch_cuts(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [event for event in state["trajectory"] if event["kind"] == "batch_cut"]


def lookup() -> ToolSpec:
    def lookup(item: str) -> str:
        """Look one item up."""
        return f"found {item}"

    return tool_spec(lookup, concurrency_safe=True)


@FACES
def test_a_batch_starts_no_more_calls_than_the_step_budget_has_left(face: str) -> None:
    model = ScriptedChatModel(script=[CHAIN], cycle=True)
    graph = cot.build_graph(model, samples=12, max_model_calls=3)

    state = run(graph, face)

    assert len(model.calls) == 3  # not 12
    assert state["outcome"] == {"status": "answered"}  # the majority of the samples it got
    assert (state["answer"], state["agreement"]) == ("395", "3/3")
    (cut,) = batch_cuts(state)
    assert (cut["asked"], cut["started"], cut["finished"], cut["budget"]) == (
        12,
        3,
        3,
        "model_calls",
    )
    assert cut["reason"]


@FACES
def test_the_samples_of_a_batch_share_the_token_budget(face: str) -> None:
    model = ScriptedChatModel(script=[FLOOD], cycle=True)
    graph = cot.build_graph(model, samples=10, token_budget=1500)

    state = run(graph, face)

    assert_within_budget_plus_one_call(state, 1500)  # not 15,000 tokens
    assert state["outcome"]["status"] == "incomplete"
    assert state["outcome"]["reason"]
    assert state["messages"][-1].text  # an honest answer, not a traceback
    (cut,) = batch_cuts(state)
    assert (cut["asked"], cut["finished"], cut["budget"]) == (10, 0, "tokens")


@FACES
def test_samples_that_finished_before_the_tokens_ran_out_give_the_answer(face: str) -> None:
    # two chains of thought and two floods; the floods stream slowly, so the chains finish first
    model = ScriptedChatModel(script=[CHAIN, FLOOD], cycle=True, token_delay=0.001)
    graph = cot.build_graph(model, samples=4, token_budget=1500)

    state = run(graph, face)

    assert_within_budget_plus_one_call(state, 1500)
    assert state["outcome"] == {"status": "answered"}
    assert (state["answer"], state["agreement"]) == ("395", "2/2")
    (cut,) = batch_cuts(state)
    assert (cut["asked"], cut["started"], cut["finished"], cut["budget"]) == (4, 4, 2, "tokens")


@FACES
def test_the_candidates_of_a_tree_search_share_the_token_budget(face: str) -> None:
    model = ScriptedChatModel(script=[FLOOD], cycle=True)
    graph = lats.build_graph(
        model, tools=[lookup()], candidates=8, token_budget=2000, max_model_calls=20
    )

    state = run(graph, face)

    assert_within_budget_plus_one_call(state, 2000)  # not 16,000 tokens
    assert state["outcome"]["status"] == "incomplete"
    assert "2000" in state["outcome"]["reason"]
    assert state["messages"][-1].text  # an honest answer, not a traceback
    assert batch_cuts(state)[0]["budget"] == "tokens"


def searching(messages: list[Any]) -> Any:
    """Every expansion asks for a lookup no branch made; every judge gives a low score."""
    if messages[0].content == LATS_JUDGE_SYSTEM:
        return {"feedback": "Not yet.", "score": 0.2}
    return tool_call("lookup", item=f"i{len(messages)}-{next(NUMBERS)}")


@FACES
def test_a_tree_search_starts_no_batch_larger_than_the_steps_left(face: str) -> None:
    model = ScriptedChatModel(script=[searching], cycle=True)
    graph = lats.build_graph(model, tools=[lookup()], candidates=8, max_model_calls=5)

    state = run(graph, face)

    assert len(model.calls) <= 5 + 1  # the budget, and the one call a question may make past it
    judged = [call for call in model.calls if call.messages[0].content == LATS_JUDGE_SYSTEM]
    assert len(judged) == 2  # three children, two steps left
    assert state["outcome"]["status"] == "incomplete"
    expansion, judging = batch_cuts(state)
    assert (expansion["asked"], expansion["started"]) == (8, 3)  # with their judges: 6 calls
    assert (judging["asked"], judging["started"]) == (3, 2)  # the 2 steps left
    assert expansion["budget"] == judging["budget"] == "model_calls"


@FACES
def test_a_batch_that_fits_its_budgets_runs_as_without_them(face: str) -> None:
    script = [CHAIN, "391 + 4.\nAnswer: 395", "Answer: 394"]
    free = run(cot.build_graph(ScriptedChatModel(script=script, cycle=True), samples=5), face)
    model = ScriptedChatModel(script=script, cycle=True)
    bounded = cot.build_graph(
        model, samples=5, max_model_calls=5, token_budget=sum(call_costs(free))
    )

    state = run(bounded, face)

    assert len(model.calls) == 5
    assert sorted(s["answer"] for s in state["samples"]) == sorted(
        s["answer"] for s in free["samples"]
    )
    assert (
        (state["answer"], state["agreement"])
        == (free["answer"], free["agreement"])
        == (
            "395",
            "4/5",
        )
    )
    assert state["outcome"] == {"status": "answered"}
    assert not batch_cuts(state)
    assert not [e for e in state["trajectory"] if e.get("stopped")]


@FACES
def test_a_tree_search_that_fits_its_budgets_runs_as_without_them(face: str) -> None:
    def search(**budgets: Any) -> tuple[dict[str, Any], ScriptedChatModel]:
        grade = {"feedback": "Right.", "score": 0.9}
        model = ScriptedChatModel(script=["395", "395", "395", grade])
        return run(lats.build_graph(model, tools=[lookup()], candidates=3, **budgets), face), model

    free, _ = search()
    state, model = search(max_model_calls=6, token_budget=sum(call_costs(free)))

    assert len(model.calls) == 4  # three samples give one child: one judge
    assert state["tree"] == free["tree"]
    assert state["outcome"] == free["outcome"] == {"status": "answered"}
    assert not batch_cuts(state)
