"""Limits set in one place: no-limit budgets, graph-wide tool defaults, and read_observation."""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import replace
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from reasoning_graphs.context import AgentContext, Limits
from reasoning_graphs.graphs import react, rewoo
from reasoning_graphs.nodes.model.retry import model_retry_policy
from reasoning_graphs.nodes.model.setup import agent_setup
from reasoning_graphs.nodes.steps.observe import budget_stop
from reasoning_graphs.option_bounds import LowerOnly, options_bounded_by
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from reasoning_graphs.tools.builtins import calculator, read_observation
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import (
    DEFAULT_MAX_OBSERVATION_CHARS,
    DEFAULT_TIMEOUT_SECONDS,
    UNSET,
    ToolDefaults,
    tool_spec,
)

FACES = ["invoke", "ainvoke"]


@pytest.fixture(params=FACES)
def face(request: pytest.FixtureRequest) -> str:
    return request.param


async def run(graph: Any, inputs: Any, face: str, **kwargs: Any) -> dict[str, Any]:
    """Run on the chosen face: the sync one on a worker thread, as a sync caller would."""
    if face == "invoke":
        return await asyncio.to_thread(graph.invoke, inputs, **kwargs)
    return await graph.ainvoke(inputs, **kwargs)


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def observation(state: dict[str, Any], call_id: str) -> ToolMessage:
    (found,) = [
        m for m in state["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == call_id
    ]
    return found


@tool
def count(n: int) -> str:
    """Count to n."""
    return str(n)


@tool
def nap(seconds: float) -> str:
    """Sleep for a while."""
    time.sleep(seconds)
    return f"slept {seconds}"


@tool
def dump(lines: int) -> str:
    """Print many numbered lines."""
    return "".join(f"line {i:05d}\n" for i in range(lines))


# budgets


async def test_max_model_calls_none_lets_a_long_run_finish(face: str) -> None:
    steps = [tool_call("count", n=i) for i in range(14)]
    model = ScriptedChatModel(script=[*steps, "Counted."])
    graph = react.build_graph(model, tools=[count], max_model_calls=None, token_budget=None)

    state = await run(graph, ask("Count to 14."), face)

    assert state["outcome"] == {"status": "answered"}
    assert state["messages"][-1].content == "Counted."
    assert len(model.calls) == 15  # past the default limit of 10


async def test_the_default_step_limit_still_stops_the_same_run(face: str) -> None:
    steps = [tool_call("count", n=i) for i in range(14)]
    model = ScriptedChatModel(script=[*steps, "Stopped."])
    graph = react.build_graph(model, tools=[count])

    state = await run(graph, ask("Count to 14."), face)

    assert state["outcome"]["status"] == "incomplete"
    assert "limit of 10 model calls" in state["outcome"]["reason"]


async def test_a_run_context_of_nones_keeps_the_graphs_no_limit(face: str) -> None:
    steps = [tool_call("count", n=i) for i in range(12)]
    model = ScriptedChatModel(script=[*steps, "Counted."])
    graph = react.build_graph(model, tools=[count], max_model_calls=None)

    context = {"max_model_calls": None, "token_budget": None, "tools": None}
    state = await run(graph, ask("Count to 12."), face, context=context)

    assert state["outcome"] == {"status": "answered"}


def test_no_limit_budgets_never_stop_and_the_context_schema_accepts_them() -> None:
    unlimited = Limits(max_model_calls=None, token_budget=None)
    busy = {"messages": [HumanMessage("q")] + [tool_call("count", n=1)] * 500, "trajectory": []}
    assert budget_stop(busy, unlimited) is None
    assert Limits(max_model_calls=3).apply(AgentContext(max_model_calls=None)).max_model_calls == 3
    schema = react.build_graph(ScriptedChatModel(), tools=[count]).get_context_jsonschema()
    for name in ("max_model_calls", "token_budget"):
        types = {option.get("type") for option in schema["properties"][name]["anyOf"]}
        assert types == {"integer", "null"}


# modes


def always_counting(calls_per_turn: int = 1) -> ScriptedChatModel:
    """A model that asks for new counting every turn, never answering."""
    numbers = itertools.count()

    def turn(messages: list[Any]) -> Any:
        return tool_calls(*(("count", {"n": next(numbers)}) for _ in range(calls_per_turn)))

    return ScriptedChatModel(script=[turn], cycle=True)


def tool_runs(state: dict[str, Any]) -> int:
    return sum(
        event["kind"] == "action" and event["decision"] == "auto" for event in state["trajectory"]
    )


@pytest.mark.parametrize(
    ("mode", "documented", "attempts"),
    [
        ("chat", {"max_tool_rounds": 1, "max_model_calls": 2, "max_tool_calls_per_turn": 5}, 3),
        (
            "agent",
            {
                "max_tool_rounds": 20,
                "max_model_calls": 21,
                "max_tool_calls_per_turn": 5,
                "max_tool_calls": 200,
                "token_budget": 200_000,
            },
            5,
        ),
    ],
)
def test_a_mode_gives_its_documented_limits_at_build_and_at_run_time(
    mode: str, documented: dict[str, int], attempts: int
) -> None:
    built = agent_setup(None, [count], mode=mode)
    run_on_unlimited = Limits(max_model_calls=None, token_budget=None).apply({"mode": mode})

    for limits in (built.limits, run_on_unlimited):
        assert {name: getattr(limits, name) for name in documented} == documented
        assert limits.mode == mode
    assert built.retry_policy.max_attempts == attempts


def test_without_a_mode_the_limits_and_retries_stay_the_defaults() -> None:
    setup = agent_setup(None, [count])
    assert setup.limits == replace(Limits(), tools=setup.limits.tools)
    assert setup.retry_policy.max_attempts == model_retry_policy().max_attempts


def test_a_chat_run_makes_one_round_of_at_most_five_calls_then_concludes() -> None:
    model = always_counting(calls_per_turn=7)
    graph = react.build_graph(model, tools=[count], max_model_calls=None)

    state = graph.invoke(ask("Count."), context={"mode": "chat"})

    assert len(model.calls) <= 3, "two steps and one closing call"
    assert tool_runs(state) <= 2 * 5, "the calls past five in a round are skipped"
    assert state["outcome"]["status"] == "incomplete"


def no_looser(after: Limits, before: Limits) -> bool:
    """Every budget of ``after`` is set wherever ``before``'s is, and no higher."""
    return all(
        getattr(before, name) is None or getattr(after, name) <= getattr(before, name)
        for name in options_bounded_by(AgentContext, LowerOnly)
    )


def test_a_runs_mode_never_loosens_the_graphs_limits() -> None:
    strict = Limits(
        max_model_calls=1,
        max_tool_rounds=1,
        max_tool_calls_per_turn=2,
        max_tool_calls=3,
        token_budget=100,
    )
    assert replace(strict.apply({"mode": "agent"}), mode=None) == strict
    for graph_limits in (Limits(), Limits.preset("chat"), Limits.preset("agent")):
        for mode in ("chat", "agent"):
            assert no_looser(graph_limits.apply({"mode": mode}), graph_limits)

    model = always_counting()
    graph = react.build_graph(model, tools=[count], max_model_calls=None, max_tool_calls=2)
    state = graph.invoke(ask("Count."), context={"mode": "agent"})
    assert tool_runs(state) == 2, "the graph's 2 calls, not the mode's 200"

    model = always_counting()
    graph = react.build_graph(model, tools=[count], mode="chat")
    graph.invoke(ask("Count."), context={"mode": "agent"})
    assert len(model.calls) <= 3, "the graph's chat limits, not the run's agent ones"


# graph-wide tool defaults


def test_unset_spec_fields_take_the_graphs_defaults() -> None:
    plain = tool_spec(count)
    own = tool_spec(nap, timeout=2.5, max_observation_chars=900)
    unlimited = tool_spec(dump, timeout=None)
    assert (plain.timeout, plain.max_observation_chars) == (UNSET, UNSET)
    assert unlimited.timeout is None  # "no limit" is a setting, not "unset"

    registry = ToolRegistry(
        [plain, own, unlimited], ToolDefaults(timeout=10.0, max_observation_chars=2000)
    )

    assert [(s.timeout, s.max_observation_chars) for s in registry] == [
        (10.0, 2000),
        (2.5, 900),
        (None, 2000),
    ]
    default = ToolRegistry([count]).get("count")
    assert default is not None
    assert default.timeout == DEFAULT_TIMEOUT_SECONDS
    assert default.max_observation_chars == DEFAULT_MAX_OBSERVATION_CHARS
    assert tool_spec(tool_spec(count, timeout=None)).timeout is None  # re-wrapping keeps it


async def test_the_graphs_tool_timeout_applies_unless_a_spec_sets_its_own(face: str) -> None:
    calls = [
        tool_call("nap", id="c1", seconds=2),
        tool_call("patient_nap", id="c2", seconds=0.4),
        "Done.",
    ]
    tools = [nap, tool_spec(nap, name="patient_nap", timeout=None)]
    graph = react.build_graph(ScriptedChatModel(script=calls), tools=tools, tool_timeout=0.2)

    started = time.perf_counter()
    state = await run(graph, ask("Nap."), face)

    assert time.perf_counter() - started < 1.8
    abandoned, finished = observation(state, "c1"), observation(state, "c2")
    assert abandoned.status == "error"
    assert "did not finish within 0.2 s" in abandoned.content
    assert (finished.status, finished.content) == ("success", "slept 0.4")


async def test_the_graphs_observation_length_applies_unless_a_spec_sets_its_own(
    face: str,
) -> None:
    calls = [tool_call("dump", id="c1", lines=200), tool_call("long_dump", id="c2", lines=200)]
    tools = [dump, tool_spec(dump, name="long_dump", max_observation_chars=5000)]
    model = ScriptedChatModel(script=[*calls, "Done."])
    graph = react.build_graph(model, tools=tools, max_observation_chars=300)

    state = await run(graph, ask("Dump."), face)

    # the state keeps both results whole; the model reads the first one cut
    assert observation(state, "c1").content == dump.invoke({"lines": 200})
    read = {m.tool_call_id: m for m in model.prompts[-1] if isinstance(m, ToolMessage)}
    cut, whole = read["c1"], read["c2"]
    assert len(cut.content) <= 300
    assert "read_observation(ref='obs-c1')" in cut.content
    assert whole.content == dump.invoke({"lines": 200})
    assert state["observations"] == {"obs-c1": dump.invoke({"lines": 200})}


async def test_a_planning_pattern_takes_the_same_defaults(face: str) -> None:
    plan = {"steps": [{"var": "E1", "tool": "dump", "reason": "r", "args": {"lines": 200}}]}
    model = ScriptedChatModel(script=[plan, "Done."])
    graph = rewoo.build_graph(model, tools=[dump], max_observation_chars=300)

    state = await run(graph, ask("Dump."), face)

    (message,) = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert message.content == dump.invoke({"lines": 200})  # kept whole
    solver = "\n".join(str(m.content) for m in model.prompts[-1])
    assert "read_observation(ref=" in solver  # the solver reads it cut
    assert "line 00100" not in solver
    assert list(state["observations"].values()) == [dump.invoke({"lines": 200})]


# read_observation with any tools


def test_any_graph_with_tools_has_read_observation_and_run_selection_keeps_it() -> None:
    registry = ToolRegistry.for_graph([count])
    assert registry.names() == ["count", "read_observation"]
    assert registry.select(["count"]).names() == ["count", "read_observation"]
    assert ToolRegistry.for_graph([]).names() == []
    assert ToolRegistry.for_graph([count, read_observation()]).names() == [
        "count",
        "read_observation",
    ]
    with pytest.raises(ValueError, match="nope"):
        registry.select(["nope"])


async def test_a_cut_result_of_any_tool_can_be_read_in_full(face: str) -> None:
    full = dump.invoke({"lines": 400})
    script = [
        tool_call("dump", id="c1", lines=400),
        tool_call("read_observation", id="c2", ref="obs-c1", offset=3000, length=1000),
        "Read it.",
    ]
    model = ScriptedChatModel(script=script)
    graph = react.build_graph(model, tools=[dump, calculator()])

    context = {"tools": ["dump"]}  # a run that enables only dump still gets the reader
    state = await run(graph, ask("Dump 400 lines."), face, context=context)

    assert model.calls[0].tools == ["dump"]  # nothing cut yet: not offered
    assert model.calls[1].tools == ["dump", "read_observation"]
    page = observation(state, "c2")
    assert page.status == "success"
    assert page.content.split("\n", 1)[1] == full[3000:4000]


def test_a_context_changed_in_place_between_runs_is_read_again() -> None:
    """Each step reads the run's options from its context: a client that tightens the same
    context object between runs gets the tighter policy, never the earlier one."""
    runs: list[str] = []

    @tool
    def touch(path: str) -> str:
        """Touch a file."""
        runs.append(path)
        return "done"

    model = ScriptedChatModel(
        script=[tool_call("touch", path="a"), AIMessage("ok"), tool_call("touch", path="b")]
    )
    graph = react.build_graph(model, [touch], checkpointer="memory")
    context = AgentContext()

    graph.invoke(ask("Touch a."), {"configurable": {"thread_id": "1"}}, context=context)
    context.approve = ["touch"]
    state = graph.invoke(ask("Touch b."), {"configurable": {"thread_id": "2"}}, context=context)

    assert runs == ["a"]  # the second call waits for a person
    assert state["__interrupt__"]
