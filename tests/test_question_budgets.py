"""Whole-question budgets of tool calls and of seconds of work, in every tool-using pattern.

A question stops once it has run ``max_tool_calls`` tools or spent
``time_budget`` seconds on model calls and tool runs — counted across plan
steps and trials — and makes at most one model call past the budget, which
concludes it. Waiting for a person is no work.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.context import Limits
from reasoning_graphs.graphs import plan_execute, react, reflexion, rewoo
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.nodes.guards.budget import (
    TIME_LIMIT,
    TOOL_LIMIT,
    budget_stop,
    calls_past_budget,
    turn_call_limit,
)
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import ToolSpec, tool_spec
from tests.helpers.outcomes import without_note

LOW = Judgement(feedback="Look further.", score=0.1)
LESSON = {"diagnosis": "Not enough found.", "advice": "Look up more."}


class Timeline:
    """The order in which a question's model calls and tool runs happened."""

    def __init__(self, tool_seconds: float = 0.0) -> None:
        self.events: list[str] = []
        self.tool_seconds = tool_seconds
        self.numbers = itertools.count(1)

    def lookup(self, *, dangerous: bool = False) -> ToolSpec:
        """A read-only lookup that records each run (and sleeps ``tool_seconds``)."""

        def lookup(item: str) -> str:
            """Look one item up."""
            time.sleep(self.tool_seconds)
            self.events.append("tool")
            return f"found {item}"

        return tool_spec(lookup, concurrency_safe=True, dangerous=dangerous)

    def reply(self, item: Any) -> Any:
        """``item`` as a script entry that records the model call it answers."""

        def answer(messages: list[Any]) -> Any:
            self.events.append("model")
            return item

        return answer

    def new_lookup(self) -> Any:
        """A script entry asking for a lookup no earlier call made (nothing to reuse)."""
        return lambda messages: self.reply(tool_call("lookup", item=f"i{next(self.numbers)}"))(
            messages
        )

    def script(self, *items: Any) -> list[Any]:
        return [item if callable(item) else self.reply(item) for item in items]

    @property
    def tool_runs(self) -> int:
        return self.events.count("tool")

    def model_calls_after_tool(self, run: int) -> int:
        """Model calls made after the ``run``-th tool run."""
        tools = [index for index, kind in enumerate(self.events) if kind == "tool"]
        return self.events[tools[run - 1] + 1 :].count("model")


def spent_of(seconds: int) -> str:
    """How a time-budget stop ends, whatever the time spent."""
    return TIME_LIMIT.split("{used:.1f}")[1].format(budget=seconds)


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def lookups(timeline: Timeline, count: int) -> list[Any]:
    return [timeline.new_lookup() for _ in range(count)]


def rewoo_chain(count: int) -> dict[str, Any]:
    """A plan of lookups each needing the one before, so each runs in its own wave."""
    steps = [
        {"var": f"E{n}", "tool": "lookup", "args": {"item": f"#E{n - 1}" if n > 1 else "start"}}
        for n in range(1, count + 1)
    ]
    return {"steps": [{**step, "reason": "needed"} for step in steps]}


def build(pattern: str, timeline: Timeline, **options: Any) -> tuple[Any, ScriptedChatModel]:
    """A graph of ``pattern`` whose model keeps asking for new lookups, as far as it is let."""
    endless = [*lookups(timeline, 8), "Enough."]
    scripts = {
        "react": [*endless, "Concluded."],
        "rewoo": [rewoo_chain(8), "Concluded."],
        "plan_execute": [
            Plan(steps=["Look up the first half.", "Look up the second half."]),
            *lookups(timeline, 2),
            "First half done.",
            *endless,
            "Concluded.",
            Replan(response="Done."),
        ],
        "reflexion": [
            *lookups(timeline, 2),
            "A first try.",
            LOW,
            LESSON,
            *endless,
            "Concluded.",
            LOW,
        ],
    }
    model = ScriptedChatModel(script=timeline.script(*scripts[pattern]))
    module = {"react": react, "rewoo": rewoo, "plan_execute": plan_execute}.get(pattern, reflexion)
    extra = {"max_trials": 2} if pattern == "reflexion" else {}
    return module.build_graph(model, [timeline.lookup()], **extra, **options), model


PATTERNS = ["react", "rewoo", "plan_execute", "reflexion"]
TOOL_PATTERNS = PATTERNS


# --- tool calls ----------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_the_tool_call_budget_stops_the_question_with_one_closing_call(pattern: str) -> None:
    timeline = Timeline()
    graph, _ = build(pattern, timeline, max_tool_calls=3, max_model_calls=None)

    state = graph.invoke(ask("Look everything up."))

    assert timeline.tool_runs == 3
    assert timeline.model_calls_after_tool(3) <= 1, "at most one call past the budget"
    assert without_note(state["outcome"]) == {
        "status": "incomplete",
        "reason": TOOL_LIMIT.format(limit=3),
    }


@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_a_run_may_lower_the_tool_call_budget(pattern: str) -> None:
    timeline = Timeline()
    graph, _ = build(pattern, timeline, max_tool_calls=6, max_model_calls=None)

    state = graph.invoke(ask("Look everything up."), context={"max_tool_calls": 3})

    assert timeline.tool_runs == 3
    assert timeline.model_calls_after_tool(3) <= 1
    assert state["outcome"]["reason"] == TOOL_LIMIT.format(limit=3)


def test_calls_that_never_ran_do_not_count_against_the_tool_budget() -> None:
    timeline = Timeline()

    def note(item: str) -> str:
        """Write a note."""
        return item

    blocked = tool_call("note", item="x")
    model = ScriptedChatModel(script=timeline.script(blocked, *lookups(timeline, 4), "Done."))
    tools = [timeline.lookup(), tool_spec(note)]
    graph = react.build_graph(model, tools, max_tool_calls=3, deny=["note"])

    state = graph.invoke(ask("Note, then look up."))

    assert timeline.tool_runs == 3, "the blocked call is not one of the three"
    assert state["outcome"]["reason"] == TOOL_LIMIT.format(limit=3)


def test_the_next_round_runs_no_more_calls_than_the_budget_has_left() -> None:
    limits = Limits(max_tool_calls=4, max_tool_calls_per_turn=3)
    ran = {"kind": "action", "turn": 1, "step": 1, "decision": "auto", "duration_ms": 1.0}
    state = {"messages": [HumanMessage("q")], "trajectory": [ran, ran, ran]}

    assert turn_call_limit(state, limits) == 1
    assert turn_call_limit(state, Limits(max_tool_calls_per_turn=3)) == 3
    assert budget_stop(state, limits) is None
    assert budget_stop({**state, "trajectory": [ran] * 4}, limits) is not None


# --- time of work ----------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_time_budget_stops_a_question_whose_tools_take_time(pattern: str) -> None:
    timeline = Timeline(tool_seconds=0.35)
    graph, _ = build(pattern, timeline, time_budget=1, max_model_calls=None)

    state = graph.invoke(ask("Look everything up."))

    runs = timeline.tool_runs
    assert 0 < runs < 8, "the question stopped before its tools ran out"
    # the budget may run out during a tool or while a reply streams (that reply is stopped
    # there); either way at most one model call starts once it is spent
    assert calls_past_budget(state, Limits(time_budget=1)) <= 1
    assert state["outcome"]["status"] == "incomplete"
    assert state["outcome"]["reason"].endswith(spent_of(seconds=1))


def test_model_latency_counts_as_work() -> None:
    timeline = Timeline()
    model = ScriptedChatModel(script=timeline.script(*lookups(timeline, 8)), delay=0.4)
    graph = react.build_graph(model, [timeline.lookup()], time_budget=1, max_model_calls=None)

    state = graph.invoke(ask("Look everything up."))

    assert len(model.calls) < 8
    assert state["outcome"]["reason"].endswith(spent_of(seconds=1))


def test_waiting_for_a_person_is_not_work_and_a_resume_keeps_the_count() -> None:
    timeline = Timeline(tool_seconds=0.4)
    script = [tool_call("lookup", item="a"), tool_call("lookup", item="b"), "Both found."]
    model = ScriptedChatModel(script=timeline.script(*script))
    graph = react.build_graph(
        model, [timeline.lookup(dangerous=True)], InMemorySaver(), time_budget=1
    )
    thread = {"configurable": {"thread_id": "budget-wait"}}

    state = graph.invoke(ask("Find a and b."), thread)
    while state.get("__interrupt__"):
        time.sleep(0.6)  # the person takes their time: more than the budget in all
        state = graph.invoke(Command(resume=["approve"]), thread)

    assert timeline.tool_runs == 2
    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].content == "Both found."
