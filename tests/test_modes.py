"""Modes as documented: ``chat`` makes one tool round then answers, ``agent`` twenty.

The model call after the last allowed round is asked with tools off, and its
reply is the answer: a run that used its rounds is answered, not incomplete.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from reasoning_graphs.context import MODES, AgentContext, Limits
from reasoning_graphs.graphs import plan_execute, react, react_text
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.nodes.steps.prompts import ROUNDS_SPENT
from reasoning_graphs.testing import RecordedCall, ScriptedChatModel, tool_call

ANSWER = "Counted as far as I was allowed."


@tool
def count(n: int) -> str:
    """Count to n."""
    return str(n)


class ToolHungryModel(ScriptedChatModel):
    """A model that always wants another tool call, unless the request turns tools off."""

    def _choose_reply(self, record: RecordedCall) -> Any:
        if record.tool_choice == "none" or not record.tools:
            return ANSWER
        return tool_call("count", n=len(self.calls))


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def tool_rounds(state: dict[str, Any]) -> int:
    return len({e["step"] for e in state["trajectory"] if e["kind"] == "action"})


def tool_runs(state: dict[str, Any]) -> int:
    return sum(e["kind"] == "action" for e in state["trajectory"])


@pytest.mark.parametrize(("mode", "rounds"), [("chat", 1), ("agent", 20)])
def test_a_mode_makes_its_rounds_then_the_model_answers_with_tools_off(
    mode: str, rounds: int
) -> None:
    model = ToolHungryModel()
    graph = react.build_graph(model, tools=[count], mode=mode)

    state = graph.invoke(ask("Count."), {"recursion_limit": 200})

    assert tool_rounds(state) == rounds
    assert len(model.calls) == rounds + 1
    assert [c.tool_choice for c in model.calls] == [None] * rounds + ["none"]
    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].text == ANSWER


@pytest.mark.parametrize("mode", ["chat", "agent"])
def test_a_runs_mode_on_an_unlimited_graph_gives_the_same_counts(mode: str) -> None:
    model = ToolHungryModel()
    graph = react.build_graph(model, tools=[count], max_model_calls=None, token_budget=None)

    state = graph.invoke(ask("Count."), {"recursion_limit": 200}, context={"mode": mode})

    rounds = MODES[mode]["max_tool_rounds"]
    assert (tool_rounds(state), len(model.calls)) == (rounds, rounds + 1)
    assert state["outcome"] == {"status": "answered"}


def test_the_round_limit_is_an_option_a_run_may_lower_but_not_raise() -> None:
    model = ToolHungryModel()
    graph = react.build_graph(model, tools=[count], max_model_calls=12, max_tool_rounds=3)

    state = graph.invoke(ask("Count."), context={"max_tool_rounds": 8})
    assert (tool_rounds(state), len(model.calls)) == (3, 4)

    model.calls.clear()
    state = graph.invoke(ask("Count."), context={"max_tool_rounds": 2})
    assert (tool_rounds(state), len(model.calls)) == (2, 3)
    assert Limits(max_tool_rounds=3).apply({"mode": "agent"}).max_tool_rounds == 3


def test_no_round_limit_by_default() -> None:
    assert Limits().max_tool_rounds is None
    model = ToolHungryModel()
    graph = react.build_graph(model, tools=[count], max_model_calls=12)

    state = graph.invoke(ask("Count."))

    assert tool_rounds(state) == 12
    assert state["outcome"]["status"] == "incomplete"  # the model-call budget, not a round limit


def test_a_model_that_calls_tools_with_tools_off_gets_no_more_rounds() -> None:
    numbers = itertools.count()
    model = ScriptedChatModel(script=[lambda _: tool_call("count", n=next(numbers))], cycle=True)
    graph = react.build_graph(model, tools=[count], max_model_calls=6, mode="chat")

    state = graph.invoke(ask("Count."))

    assert tool_runs(state) == 1
    assert model.calls[1].tool_choice == "none"
    assert len(model.calls) <= 3, "the round, the answer with tools off, one closing call"
    assert state["outcome"]["status"] == "incomplete"
    assert "1 tool round" in state["outcome"]["reason"]


def test_plan_steps_share_the_questions_rounds() -> None:
    class Planner(ToolHungryModel):
        def _choose_reply(self, record: RecordedCall) -> Any:
            if record.tools == ["Plan"]:
                return Plan(steps=["Count once.", "Count twice."])
            if record.tools == ["Replan"]:
                replans = sum(c.tools == ["Replan"] for c in self.calls)
                return Replan(steps=["Count twice."]) if replans == 1 else Replan(response="Done.")
            return super()._choose_reply(record)

    model = Planner()
    graph = plan_execute.build_graph(model, tools=[count], max_model_calls=12, max_tool_rounds=1)

    state = graph.invoke(ask("Count in two steps."), {"recursion_limit": 100})

    step_calls = [c for c in model.calls if c.tools not in (["Plan"], ["Replan"])]
    assert len(step_calls) >= 3, "both plan steps ran"
    assert [c.tool_choice for c in step_calls] == [None] + ["none"] * (len(step_calls) - 1)
    assert state["messages"][-1].text == "Done."


def test_the_round_option_is_a_whole_number() -> None:
    with pytest.raises(ValueError, match="max_tool_rounds"):
        AgentContext(max_tool_rounds="two")  # type: ignore[arg-type]


class TextHungryModel(ScriptedChatModel):
    """A text-format model that always writes another action, unless told the rounds are made."""

    def _choose_reply(self, record: RecordedCall) -> Any:
        if ROUNDS_SPENT in record.messages[-1].text:
            return f"Final Answer: {ANSWER}"
        return f'Thought: more\nAction: count\nAction Input: {{"n": {len(self.calls)}}}'


@pytest.mark.parametrize(("mode", "rounds"), [("chat", 1), ("agent", 20)])
def test_text_react_makes_the_modes_rounds_then_answers(mode: str, rounds: int) -> None:
    model = TextHungryModel(script=[])
    graph = react_text.build_graph(model, tools=[count], mode=mode)

    state = graph.invoke(ask("Count."))

    assert (tool_rounds(state), len(model.calls)) == (rounds, rounds + 1)
    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].content == ANSWER
