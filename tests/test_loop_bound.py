"""Every pattern on a model whose async face is bound to one event loop, as a real client's is.

``LoopBoundChatModel`` refuses an async call on any loop but the one of its first
async call, the way a pooled HTTP client (langchain-openai's among them) fails
with "Event loop is closed". So a sync face that runs model calls on a fresh
event loop, or through the model's async methods at all, fails here, while the
plain scripted double cannot tell. Each test also checks which face the model
saw: only sync calls from ``invoke``/``stream``, only async ones from
``ainvoke``/``astream``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.plan_react.plan import PlanItems
from reasoning_graphs.graphs.tot.replies import FinalAnswer, NextStep, Proposals, Valuation
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.review import APPROVAL_KIND
from reasoning_graphs.testing import LoopBoundChatModel, LoopBoundError, tool_call, tool_calls
from reasoning_graphs.tools.execute import TOOL_TIMED_OUT
from reasoning_graphs.tools.spec import ToolSpec, tool_spec
from tests.helpers.tool_log import ToolLog, sleeping_tool

SYNC_FACES = ["invoke", "stream"]
ASYNC_FACES = ["ainvoke", "astream"]
STREAM_MODES = ["values", "updates", "messages"]
MIXED_FACES = ["sync", "async", "sync", "async"]  # invoke, ainvoke, stream, astream


def ask(question: str = "Handle prod.") -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def new_thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"loop-bound-{time.perf_counter_ns()}"}}


def collect(chunks: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """The final state of a multi-mode stream, with its interrupts as ``invoke`` reports them."""
    state: dict[str, Any] = {}
    interrupts: tuple[Any, ...] = ()
    for mode, data in chunks:
        if mode == "values":
            state = data
        elif mode == "updates" and "__interrupt__" in data:
            interrupts += tuple(data["__interrupt__"])
    return {**state, "__interrupt__": interrupts} if interrupts else state


def run_sync(graph: Any, value: Any, face: str, config: dict[str, Any] | None = None) -> dict:
    if face == "invoke":
        return graph.invoke(value, config)
    return collect(graph.stream(value, config, stream_mode=STREAM_MODES))


async def run_async(
    graph: Any, value: Any, face: str, config: dict[str, Any] | None = None
) -> dict:
    if face == "ainvoke":
        return await graph.ainvoke(value, config)
    chunks: AsyncIterator[tuple[str, Any]] = graph.astream(value, config, stream_mode=STREAM_MODES)
    return collect([chunk async for chunk in chunks])


def saw_only(model: LoopBoundChatModel, face: str) -> None:
    """The model was called, only through ``face`` ("sync" or "async"), with no loop error."""
    assert model.loop_errors == []
    assert model.faces, "the model was never called"
    assert set(model.faces) == {face}


def text_of(messages: list[BaseMessage]) -> str:
    return messages[-1].text


def grade(messages: list[BaseMessage]) -> dict[str, Any]:
    """A LATS judge: an answer scores high, a branch with an observation in between."""
    text = text_of(messages)
    if "Final answer: Done." in text:
        return {"feedback": "Right.", "score": 0.95}
    return {"feedback": "Not there yet.", "score": 0.6 if "done with" in text else 0.3}


@dataclass(frozen=True)
class Case:
    """How one pattern runs one call of ``tool`` and answers "Done."."""

    script: Callable[[str], list[Any]]
    answer: str = "Done."
    options: dict[str, Any] = field(default_factory=dict)
    uses_tools: bool = True


def react_text_call(tool: str) -> str:
    return f'Thought: handle it\nAction: {tool}\nAction Input: {{"item": "prod"}}'


CASES: dict[str, Case] = {
    "react": Case(lambda tool: [tool_call(tool, item="prod"), "Done."]),
    "react_text": Case(lambda tool: [react_text_call(tool), "Thought: ok\nFinal Answer: Done."]),
    "plan_execute": Case(
        lambda tool: [
            Plan(steps=["Handle prod."]),
            tool_call(tool, item="prod"),
            "prod handled",
            Replan(response="Done."),
        ]
    ),
    "rewoo": Case(
        lambda tool: [
            {"steps": [{"var": "E1", "tool": tool, "args": {"item": "prod"}, "reason": "needed"}]},
            "Done.",
        ]
    ),
    "llm_compiler": Case(
        lambda tool: [
            {"tasks": [{"id": 1, "tool": tool, "args": {"item": "prod"}, "deps": []}]},
            {"answer": "Done.", "replan": False, "reason": ""},
        ]
    ),
    "reflexion": Case(
        lambda tool: [
            tool_call(tool, item="prod"),
            "Done.",
            Judgement(feedback="Right.", score=0.9),
        ]
    ),
    "lats": Case(
        lambda tool: [tool_call(tool, item="prod"), grade, "Done.", grade],
        options={"candidates": 1},
    ),
    "cot": Case(
        lambda tool: ["Thinking it over.\nAnswer: Done", "Thinking again.\nAnswer: Done"],
        answer="Done",
        options={"samples": 2},
        uses_tools=False,
    ),
    "tot": Case(
        lambda tool: [
            Proposals(steps=[NextStep(step="It is done.", solves=True)]),
            Valuation(reason="It is complete.", verdict="sure"),
            FinalAnswer(answer="Done."),
        ],
        uses_tools=False,
    ),
    "plan_react": Case(
        lambda tool: [PlanItems(items=["Handle prod."]), tool_call(tool, item="prod"), "Done."]
    ),
}
TOOL_PATTERNS = [name for name, case in CASES.items() if case.uses_tools]


def test_every_pattern_has_a_case() -> None:
    assert set(CASES) == set(PATTERNS)


def build(
    pattern: str,
    model: LoopBoundChatModel,
    tools: list[ToolSpec],
    checkpointer: Any = None,
    **options: Any,
) -> Any:
    return graph_builder(pattern)(
        model, tools=tools, checkpointer=checkpointer, **{**CASES[pattern].options, **options}
    )


def check_answered(state: dict[str, Any], pattern: str, log: ToolLog) -> None:
    assert "__interrupt__" not in state
    assert state["messages"][-1].content == CASES[pattern].answer
    assert state["outcome"] == {"status": "answered"}
    if CASES[pattern].uses_tools:
        assert log.names() == ["lookup"]


# --- every pattern, each face ---------------------------------------------------------------


@pytest.mark.parametrize("face", SYNC_FACES)
@pytest.mark.parametrize("pattern", list(CASES))
def test_the_sync_face_answers_with_sync_model_calls_only(
    pattern: str, face: str, log: ToolLog
) -> None:
    model = LoopBoundChatModel(script=CASES[pattern].script("lookup"))
    graph = build(pattern, model, [sleeping_tool(log, "lookup", safe=True)])

    state = run_sync(graph, ask(), face)

    check_answered(state, pattern, log)
    saw_only(model, "sync")


@pytest.mark.parametrize("face", ASYNC_FACES)
@pytest.mark.parametrize("pattern", list(CASES))
async def test_the_async_face_answers_with_async_model_calls_only(
    pattern: str, face: str, log: ToolLog
) -> None:
    model = LoopBoundChatModel(script=CASES[pattern].script("lookup"))
    graph = build(pattern, model, [sleeping_tool(log, "lookup", safe=True)])

    state = await run_async(graph, ask(), face)

    check_answered(state, pattern, log)
    saw_only(model, "async")
    assert model.bound_loop is asyncio.get_running_loop()


@pytest.mark.parametrize("pattern", list(CASES))
def test_one_graph_and_one_model_serve_both_faces_in_mixed_order(
    pattern: str, log: ToolLog
) -> None:
    script = CASES[pattern].script("lookup")
    model = LoopBoundChatModel(script=script * 4)
    graph = build(pattern, model, [sleeping_tool(log, "lookup", safe=True)])
    loop = asyncio.new_event_loop()  # the program's one loop for its async runs
    try:
        states = [
            run_sync(graph, ask(), "invoke"),
            loop.run_until_complete(run_async(graph, ask(), "ainvoke")),
            run_sync(graph, ask(), "stream"),
            loop.run_until_complete(run_async(graph, ask(), "astream")),
        ]
    finally:
        loop.close()

    assert model.loop_errors == []
    assert model.faces == [face for face in MIXED_FACES for _ in script]
    for state in states:
        assert state["messages"][-1].content == CASES[pattern].answer
        assert state["outcome"] == {"status": "answered"}


@pytest.mark.parametrize("pattern", list(CASES))
async def test_the_sync_face_called_inside_a_running_loop_still_makes_sync_calls(
    pattern: str, log: ToolLog
) -> None:
    script = CASES[pattern].script("lookup")
    model = LoopBoundChatModel(script=script * 4)
    graph = build(pattern, model, [sleeping_tool(log, "lookup", safe=True)])

    states = [
        graph.invoke(ask()),  # blocks this loop, as a notebook cell does
        await run_async(graph, ask(), "ainvoke"),
        run_sync(graph, ask(), "stream"),
        await run_async(graph, ask(), "astream"),
    ]

    assert model.loop_errors == []
    assert model.faces == [face for face in MIXED_FACES for _ in script]
    assert all(state["outcome"] == {"status": "answered"} for state in states)


# --- approvals: interrupt, then resume with an approval -------------------------------------


def approval_graph(pattern: str, log: ToolLog) -> tuple[Any, LoopBoundChatModel]:
    model = LoopBoundChatModel(script=CASES[pattern].script("deploy"))
    tools = [sleeping_tool(log, "deploy", safe=False, dangerous=True)]
    return build(pattern, model, tools, InMemorySaver()), model


def check_paused(state: dict[str, Any], log: ToolLog) -> None:
    (interrupt,) = state["__interrupt__"]
    assert interrupt.value["kind"] == APPROVAL_KIND
    assert [(c["name"], c["args"]) for c in interrupt.value["calls"]] == [
        ("deploy", {"item": "prod"})
    ]
    assert log.runs == []


def check_resumed(state: dict[str, Any], pattern: str, log: ToolLog) -> None:
    assert "__interrupt__" not in state
    assert log.names() == ["deploy"]
    assert log.runs[0]["args"] == {"item": "prod"}
    assert state["messages"][-1].content == CASES[pattern].answer
    assert state["outcome"] == {"status": "answered"}


APPROVE = Command(resume=[{"type": "approve"}])


@pytest.mark.parametrize("face", SYNC_FACES)
@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_an_approval_pauses_and_resumes_on_the_sync_face(
    pattern: str, face: str, log: ToolLog
) -> None:
    graph, model = approval_graph(pattern, log)
    thread = new_thread()

    check_paused(run_sync(graph, ask(), face, thread), log)
    state = run_sync(graph, APPROVE, face, thread)

    check_resumed(state, pattern, log)
    saw_only(model, "sync")


@pytest.mark.parametrize("face", ASYNC_FACES)
@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
async def test_an_approval_pauses_and_resumes_on_the_async_face(
    pattern: str, face: str, log: ToolLog
) -> None:
    graph, model = approval_graph(pattern, log)
    thread = new_thread()

    check_paused(await run_async(graph, ask(), face, thread), log)
    state = await run_async(graph, APPROVE, face, thread)

    check_resumed(state, pattern, log)
    saw_only(model, "async")


# --- a tool past its timeout is abandoned, on both faces ------------------------------------

SLOW_SECONDS = 25
TIMEOUT = 1
TIMEOUT_CASES: dict[str, Case] = {
    "react": Case(lambda tool: [tool_call(tool, item="x"), "Done."]),
    "llm_compiler": CASES["llm_compiler"],
    "lats": CASES["lats"],
}


def slow_tool(kind: str) -> ToolSpec:
    """A tool that would take 25 s, as a function that sleeps or a coroutine that waits."""
    if kind == "sync":

        def slow(item: str) -> str:
            """Fetches something slowly."""
            time.sleep(SLOW_SECONDS)
            return "late"

        return tool_spec(slow, timeout=TIMEOUT)

    async def slow_async(item: str) -> str:
        """Fetches something slowly."""
        await asyncio.sleep(SLOW_SECONDS)
        return "late"

    return tool_spec(slow_async, name="slow", timeout=TIMEOUT)


def check_timed_out(state: dict[str, Any], elapsed: float) -> None:
    assert TIMEOUT * 0.9 <= elapsed < 10
    (action,) = [e for e in state["trajectory"] if e["kind"] == "action"]
    assert action["tool"] == "slow"
    assert action["observation"] == TOOL_TIMED_OUT.format(name="slow", seconds=TIMEOUT)
    assert state["messages"][-1].content == "Done."


def timeout_graph(pattern: str, kind: str) -> tuple[Any, LoopBoundChatModel]:
    model = LoopBoundChatModel(script=TIMEOUT_CASES[pattern].script("slow"))
    options = TIMEOUT_CASES[pattern].options
    return graph_builder(pattern)(model, tools=[slow_tool(kind)], **options), model


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("pattern", list(TIMEOUT_CASES))
def test_a_tool_past_its_timeout_is_abandoned_on_the_sync_face(pattern: str, kind: str) -> None:
    graph, model = timeout_graph(pattern, kind)

    started = time.perf_counter()
    state = graph.invoke(ask())

    check_timed_out(state, time.perf_counter() - started)
    saw_only(model, "sync")


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("pattern", list(TIMEOUT_CASES))
async def test_a_tool_past_its_timeout_is_abandoned_on_the_async_face(
    pattern: str, kind: str
) -> None:
    graph, model = timeout_graph(pattern, kind)

    started = time.perf_counter()
    state = await graph.ainvoke(ask())

    check_timed_out(state, time.perf_counter() - started)
    saw_only(model, "async")


# --- concurrency survives on both faces -----------------------------------------------------

NAP = 0.5  # each overlapping piece of work; one after another would take twice as long


def napping_tool(log: ToolLog, kind: str) -> ToolSpec:
    """A read-only ``lookup`` that sleeps (sync) or waits (async) and records when it ran."""
    if kind == "sync":
        return sleeping_tool(log, "lookup", NAP, safe=True)

    async def lookup(item: str) -> str:
        """Test tool lookup: processes one item."""
        started = time.perf_counter()
        await asyncio.sleep(NAP)
        log.record("lookup", {"item": item}, started)
        return f"lookup done with {item}"

    return tool_spec(lookup, concurrency_safe=True)


def two_lookups(pattern: str) -> list[Any]:
    if pattern == "react":
        return [tool_calls(("lookup", {"item": "a"}), ("lookup", {"item": "b"})), "Done."]
    if pattern == "rewoo":
        steps = [
            {"var": f"E{i}", "tool": "lookup", "args": {"item": item}, "reason": "needed"}
            for i, item in enumerate("ab", start=1)
        ]
        return [{"steps": steps}, "Done."]
    tasks = [
        {"id": i, "tool": "lookup", "args": {"item": item}, "deps": []}
        for i, item in enumerate("ab", start=1)
    ]
    return [{"tasks": tasks}, {"answer": "Done.", "replan": False, "reason": ""}]


def check_overlapped(log: ToolLog) -> None:
    assert sorted(run["args"]["item"] for run in log.runs) == ["a", "b"]
    total = max(run["end"] for run in log.runs) - min(run["start"] for run in log.runs)
    assert total < NAP * 1.8, f"the two {NAP} s lookups took {total:.2f} s: they did not overlap"


TOOL_OVERLAP = ["react", "rewoo", "llm_compiler"]


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("pattern", TOOL_OVERLAP)
def test_read_only_calls_overlap_on_the_sync_face(pattern: str, kind: str, log: ToolLog) -> None:
    model = LoopBoundChatModel(script=two_lookups(pattern))
    graph = graph_builder(pattern)(model, tools=[napping_tool(log, kind)])

    state = graph.invoke(ask())

    check_overlapped(log)
    assert state["messages"][-1].content == "Done."
    saw_only(model, "sync")


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("pattern", TOOL_OVERLAP)
async def test_read_only_calls_overlap_on_the_async_face(
    pattern: str, kind: str, log: ToolLog
) -> None:
    model = LoopBoundChatModel(script=two_lookups(pattern))
    graph = graph_builder(pattern)(model, tools=[napping_tool(log, kind)])

    state = await graph.ainvoke(ask())

    check_overlapped(log)
    assert state["messages"][-1].content == "Done."
    saw_only(model, "async")


def overlapping(spans: list[Any]) -> bool:
    return max(span.started for span in spans) < min(span.ended for span in spans)


def sampling_graph(pattern: str) -> tuple[Any, LoopBoundChatModel]:
    if pattern == "lats":
        script = ["Done.", "Done!", grade, grade]  # two samples, then two judges
        model = LoopBoundChatModel(script=script, delay=NAP)
        return graph_builder("lats")(model, tools=[], candidates=2), model
    model = LoopBoundChatModel(script=["Answer: Done"], cycle=True, delay=NAP)
    return graph_builder("cot")(model, samples=3), model


def check_samples_overlapped(pattern: str, model: LoopBoundChatModel) -> None:
    spans = sorted(model.spans, key=lambda span: span.started)
    if pattern == "lats":
        assert len(spans) == 4
        assert overlapping(spans[:2]), "the two samples of one expansion ran one after another"
        assert overlapping(spans[2:]), "the judges of one expansion ran one after another"
    else:
        assert len(spans) == 3
        assert overlapping(spans), "the three chains of thought ran one after another"


@pytest.mark.parametrize("pattern", ["lats", "cot"])
def test_samples_overlap_on_the_sync_face(pattern: str) -> None:
    graph, model = sampling_graph(pattern)

    state = graph.invoke(ask())

    assert state["outcome"] == {"status": "answered"}
    check_samples_overlapped(pattern, model)
    saw_only(model, "sync")


@pytest.mark.parametrize("pattern", ["lats", "cot"])
async def test_samples_overlap_on_the_async_face(pattern: str) -> None:
    graph, model = sampling_graph(pattern)

    state = await graph.ainvoke(ask())

    assert state["outcome"] == {"status": "answered"}
    check_samples_overlapped(pattern, model)
    saw_only(model, "async")


# --- the double itself ----------------------------------------------------------------------


def test_a_fresh_event_loop_per_call_fails_as_a_pooled_client_does() -> None:
    model = LoopBoundChatModel(script=["one", "two"])

    assert asyncio.run(model.ainvoke("hi")).content == "one"
    with pytest.raises(LoopBoundError) as failure:
        asyncio.run(model.ainvoke("hi"))

    assert isinstance(failure.value, RuntimeError)
    assert model.loop_errors == [failure.value]
    assert len(model.calls) == 1  # the refused call consumed no reply
    assert model.faces == ["async", "async"]


def test_an_async_call_on_a_second_live_loop_fails() -> None:
    model = LoopBoundChatModel(script=["one", "two"])
    other = asyncio.new_event_loop()
    runner = threading.Thread(target=other.run_forever, daemon=True)
    runner.start()
    try:
        first = asyncio.run_coroutine_threadsafe(model.ainvoke("hi"), other).result(timeout=5)
        assert first.content == "one"
        with pytest.raises(LoopBoundError):
            asyncio.run(model.ainvoke("hi"))
        assert not other.is_closed()
    finally:
        other.call_soon_threadsafe(other.stop)
        runner.join(timeout=5)
        other.close()


async def test_concurrent_async_calls_on_one_loop_are_fine() -> None:
    model = LoopBoundChatModel(script=["reply"], cycle=True, delay=0.05)

    replies = await asyncio.gather(*(model.ainvoke(str(i)) for i in range(8)))

    assert [reply.content for reply in replies] == ["reply"] * 8
    assert (model.sync_calls, model.async_calls) == (0, 8)
    assert overlapping(model.spans)


async def test_sync_calls_touch_no_loop_even_inside_one() -> None:
    model = LoopBoundChatModel(script=["one", "two"])

    assert model.invoke("hi").content == "one"  # from a thread that runs a loop
    assert await asyncio.to_thread(lambda: model.invoke("hi").content) == "two"

    assert model.bound_loop is None
    assert (model.sync_calls, model.async_calls) == (2, 0)


def test_sync_calls_from_many_threads_are_counted_and_replayed_in_order() -> None:
    model = LoopBoundChatModel(script=[str(i) for i in range(200)])

    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(pool.map(lambda _: model.invoke("hi").content, range(200)))

    assert sorted(replies, key=int) == [str(i) for i in range(200)]
    assert (model.sync_calls, model.async_calls, len(model.spans)) == (200, 0, 200)


def test_scripted_like_the_plain_double() -> None:
    boom = ValueError("scripted failure")
    model = LoopBoundChatModel(script=[tool_call("lookup", item="a"), Plan(steps=["x"]), boom])

    assert model.invoke("hi").tool_calls[0]["args"] == {"item": "a"}
    assert model.with_structured_output(Plan).invoke("plan") == Plan(steps=["x"])
    with pytest.raises(ValueError, match="scripted failure"):
        model.invoke("fail")
    assert model.sync_calls == 3
