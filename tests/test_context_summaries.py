"""Summaries of the middle of a long run: made incrementally, kept in the state, cheap.

A summary covers a stated range of the messages a prompt leaves out; later calls
reuse it and fold in only the new messages, at most once per
:data:`~reasoning_graphs.nodes.model.window.SUMMARY_EVERY` rounds. Summary calls
cost tokens but are not model calls.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import Field

from reasoning_graphs.context import AgentContext
from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.nodes.guards.budget import question_spending
from reasoning_graphs.nodes.model.window import SUMMARY_EVERY, SUMMARY_INSTRUCTIONS
from reasoning_graphs.run_input import RunInputError
from reasoning_graphs.served_models import ALLOWED_MODELS_ENV, check_served_model
from reasoning_graphs.testing import RecordedCall, ScriptedChatModel, tool_call

QUESTION = "Which of the reports mentions the Lisbon office?"
ANSWER = "Report 12 mentions it."
PROTECTIVE = {"context_strategy": "protective", "max_model_calls": None, "max_tool_calls": None}


@tool
def read_report(number: int) -> str:
    """Read one report by its number."""
    return f"Report {number}: quarterly figures, staff and offices. " * 8


@tool
def publish(text: str) -> str:
    """Publish a finding."""
    return "published"


def is_summary_request(messages: list[BaseMessage]) -> bool:
    return bool(messages) and messages[0].text == SUMMARY_INSTRUCTIONS


class Researcher(ScriptedChatModel):
    """Reads reports 1..``rounds`` (``special`` at their round instead), then answers;
    answers every summary request with a summary naming the reports it was shown."""

    rounds: int = 12
    special: dict[int, Any] = Field(default_factory=dict)

    def _choose_reply(self, record: RecordedCall) -> Any:
        if is_summary_request(record.messages):
            seen = sorted(set(re.findall(r"Report (\d+):", record.messages[-1].text)), key=int)
            return f"Summary: read reports {', '.join(seen)}."
        step = sum(not is_summary_request(c.messages) for c in self.calls)
        if step in self.special:
            return self.special[step]
        return tool_call("read_report", number=step) if step <= self.rounds else ANSWER


def ask() -> dict[str, Any]:
    return {"messages": [HumanMessage(QUESTION)]}


def summary_positions(model: ScriptedChatModel) -> list[int]:
    """Where the summary requests came, counted in the run's other (step) calls before them."""
    positions, steps = [], 0
    for call in model.calls:
        if is_summary_request(call.messages):
            positions.append(steps)
        else:
            steps += 1
    return positions


def test_a_long_run_summarises_at_most_once_per_k_rounds() -> None:
    model = Researcher(rounds=40)
    graph = build_graph(model, tools=[read_report], **PROTECTIVE)

    state = graph.invoke(ask(), {"recursion_limit": 400})

    assert state["messages"][-1].text == ANSWER
    positions = summary_positions(model)
    assert positions, "the run did compress"
    assert all(b - a >= SUMMARY_EVERY for a, b in itertools.pairwise(positions))
    assert len(positions) <= 41 // SUMMARY_EVERY


def test_each_summary_folds_in_only_the_new_messages() -> None:
    model = Researcher(rounds=16)
    graph = build_graph(model, tools=[read_report], **PROTECTIVE)

    graph.invoke(ask())

    requests = [c.messages for c in model.calls if is_summary_request(c.messages)]
    assert len(requests) >= 2
    first, second = requests[0][-1].text, requests[1][-1].text
    covered = set(re.findall(r"Report (\d+):", first))
    assert "Summary: read reports" in second, "the earlier summary is folded into"
    assert covered.isdisjoint(re.findall(r"Report (\d+):", second)), "nothing is sent twice"


def test_later_prompts_reuse_the_summary_without_asking_again() -> None:
    model = Researcher(rounds=16)
    graph = build_graph(model, tools=[read_report], **PROTECTIVE)

    graph.invoke(ask())

    first = next(i for i, c in enumerate(model.calls) if is_summary_request(c.messages))
    following = model.calls[first + 1]
    assert not is_summary_request(following.messages)
    assert any("Summary: read reports" in m.text for m in following.messages)
    reuse = model.calls[first + 2]
    assert not is_summary_request(reuse.messages), "the next call reuses it"
    assert any("Summary: read reports" in m.text for m in reuse.messages)


def test_summary_calls_cost_tokens_but_are_not_model_steps() -> None:
    model = Researcher(rounds=12)
    graph = build_graph(model, tools=[read_report], **{**PROTECTIVE, "max_model_calls": 13})

    state = graph.invoke(ask())

    assert any(is_summary_request(c.messages) for c in model.calls)
    assert state["outcome"] == {"status": "answered"}, "13 steps suffice: summaries are free"
    assert state["messages"][-1].text == ANSWER
    spent = question_spending(state)
    assert spent.calls == 13
    assert spent.tokens == sum(c.usage["total_tokens"] for c in model.calls if c.usage)


def test_the_summary_lives_in_the_state_and_a_resume_does_not_redo_it() -> None:
    saver = InMemorySaver()
    thread = {"configurable": {"thread_id": "summary-resume"}}
    options = {**PROTECTIVE, "approve": ["publish"], "checkpointer": saver}
    pause = {9: tool_call("publish", text="Lisbon is in report 12")}
    before = Researcher(rounds=10, special=pause)
    build_graph(before, tools=[read_report, publish], **options).invoke(ask(), thread)
    assert summary_positions(before) == [7]

    after = Researcher(rounds=10, special=pause)  # a new process: nothing kept in memory
    steps_before = [c for c in before.calls if not is_summary_request(c.messages)]
    after.calls.extend(steps_before)  # so that it goes on from the same step
    graph = build_graph(after, tools=[read_report, publish], **options)
    state = graph.invoke(Command(resume=[{"type": "approve"}]), thread)

    resumed = after.calls[len(steps_before) :]
    assert state["messages"][-1].text == ANSWER
    assert not any(is_summary_request(c.messages) for c in resumed[:2])
    assert any("Summary: read reports" in m.text for m in resumed[0].messages)


def test_a_summary_model_makes_the_summaries() -> None:
    model = Researcher(rounds=12)
    summariser = Researcher()
    graph = build_graph(model, tools=[read_report], summary_model=summariser, **PROTECTIVE)

    state = graph.invoke(ask())

    assert state["messages"][-1].text == ANSWER
    assert not any(is_summary_request(c.messages) for c in model.calls)
    assert summariser.calls
    assert all(is_summary_request(c.messages) for c in summariser.calls)
    assert any("Summary: read reports" in m.text for m in model.calls[-1].messages)


def test_a_served_run_may_name_only_an_allowed_summary_model(monkeypatch) -> None:
    monkeypatch.setenv(ALLOWED_MODELS_ENV, "openai:cheap")
    check_served_model({"summary_model": "openai:cheap"})
    with pytest.raises(RunInputError, match="summary_model"):
        check_served_model({"summary_model": "local:/etc/passwd"})
    with pytest.raises(ValueError, match="summary_model"):
        AgentContext(summary_model=3)  # type: ignore[arg-type]
