"""Guards that watch a model call while it runs, in every pattern, on both faces.

- A reply that floods past the token budget is stopped while it streams, and
  the question is concluded by one closing call.
- A reply still running when the time budget runs out is stopped there.
- A call past the per-call timeout, or silent for the idle timeout, ends the
  question with an honest incomplete answer and no further model call.
- A failure that may pass is retried with a ``retry`` event the CLI prints;
  one that keeps failing ends the question cleanly instead of raising.
"""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.context import AgentContext, Limits
from reasoning_graphs.graphs import (
    cot,
    lats,
    llm_compiler,
    plan_execute,
    react,
    react_text,
    reflexion,
    rewoo,
)
from reasoning_graphs.graphs.plan_execute.plan import Plan
from reasoning_graphs.nodes.model.retry import model_retry_policy
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import calculator
from reasoning_graphs.tools.spec import tool_spec

FLOOD = " ".join(f"word{i}" for i in range(20_000))
"""A reply of about 40,000 estimated tokens: far past any budget below."""
PATTERNS = {
    "react": react,
    "react_text": react_text,
    "rewoo": rewoo,
    "llm_compiler": llm_compiler,
    "plan_execute": plan_execute,
    "reflexion": reflexion,
    "lats": lats,
    "cot": cot,
}
FAST_RETRY = model_retry_policy(initial_interval=0.01)


def ask(question: str = "What is 6*7?") -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def run(graph: CompiledStateGraph, face: str, **kwargs: Any) -> dict[str, Any]:
    if face == "sync":
        return graph.invoke(ask(), **kwargs)
    return asyncio.run(graph.ainvoke(ask(), **kwargs))


def stream(graph: CompiledStateGraph, face: str, modes: Any) -> list[Any]:
    """Every chunk of a streamed run of :func:`ask`'s question, on ``face``."""
    if face == "sync":
        return list(graph.stream(ask(), stream_mode=modes))

    async def collect() -> list[Any]:
        return [chunk async for chunk in graph.astream(ask(), stream_mode=modes)]

    return asyncio.run(collect())


def stopped_events(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in state["trajectory"] if e["kind"] == "thought" and e.get("stopped")]


FACES = pytest.mark.parametrize("face", ["sync", "async"])


class SlowWhenSlow(ScriptedChatModel):
    """Streams a reply that starts with "slow" over 10 s, word by word; others at once."""

    def _latency(self, message: AIMessage) -> float:
        return 10.0 if message.text.startswith("slow") else 0.0


@FACES
@pytest.mark.parametrize("option", ["model_timeout", "idle_timeout"])
@pytest.mark.parametrize("name", list(PATTERNS))
def test_a_model_that_never_answers_ends_every_pattern_honestly(
    name: str, option: str, face: str
) -> None:
    model = ScriptedChatModel(script=["never seen"], cycle=True, delay=30)
    graph = PATTERNS[name].build_graph(model, tools=[calculator()], **{option: 0.3})

    started = time.monotonic()
    state = run(graph, face)
    elapsed = time.monotonic() - started

    assert elapsed < 5
    assert state["outcome"]["status"] == "incomplete"
    assert "0.3 s" in state["outcome"]["reason"]
    assert stopped_events(state), "the stopped call is in the trajectory"
    assert all(e.get("halt") for e in stopped_events(state))
    assert isinstance(state["messages"][-1], AIMessage)
    # no call was made after the stop: only the first (concurrent) calls ever started
    first_calls = len(stopped_events(state))
    assert len(model.calls) == first_calls


@FACES
def test_a_silent_model_is_stopped_by_the_idle_timeout(face: str) -> None:
    model = ScriptedChatModel(script=["never seen"], delay=30)
    graph = react.build_graph(model, tools=[calculator()])

    started = time.monotonic()
    state = run(graph, face, context={"idle_timeout": 0.3})

    assert time.monotonic() - started < 5
    assert state["outcome"]["status"] == "incomplete"
    assert "sent nothing for 0.3 s" in state["outcome"]["reason"]
    assert len(model.calls) == 1


class StreamingModel(ScriptedChatModel):
    """A model with a ``streaming`` field, as many providers' have: set, LangChain streams
    every reply."""

    streaming: bool = False


@FACES
@pytest.mark.parametrize("streamed_by", ["messages mode", "the model"])
def test_a_reply_that_keeps_streaming_is_never_cut_by_the_idle_timeout(
    face: str, streamed_by: str
) -> None:
    # 1.5 s of words, one every 0.05 s, under an idle timeout of 0.4 s: never silent, so whole
    reply = " ".join(["steady"] * 30)
    model = StreamingModel(script=[reply], token_delay=0.05)
    if streamed_by == "the model":
        model = StreamingModel(script=[reply], token_delay=0.05, streaming=True)
    graph = react.build_graph(model, tools=[calculator()], idle_timeout=0.4)

    modes = ["messages", "values"] if streamed_by == "messages mode" else ["values"]
    state = [value for mode, value in stream(graph, face, modes) if mode == "values"][-1]

    assert state["outcome"]["status"] == "answered"
    assert state["messages"][-1].content == reply
    assert not stopped_events(state)


@FACES
def test_a_reply_that_keeps_streaming_is_stopped_by_the_call_timeout(face: str) -> None:
    # words keep coming (never idle), but the whole reply would take 20 s; streamed as the
    # CLI and the dev server stream (LangGraph's "messages" mode), so its words are counted
    model = ScriptedChatModel(script=[" ".join(["slow"] * 200)], token_delay=0.1)
    graph = react.build_graph(model, tools=[calculator()], model_timeout=0.5, idle_timeout=5)

    started = time.monotonic()
    chunks = stream(graph, face, ["messages", "values"])
    state = [value for mode, value in chunks if mode == "values"][-1]

    assert time.monotonic() - started < 5
    assert state["outcome"]["status"] == "incomplete"
    (event,) = stopped_events(state)
    assert event["text"].startswith("slow slow")  # what it had written is kept
    assert len(event["text"].split()) < 200


def flooding(name: str) -> tuple[Any, list[Any], dict[str, Any]]:
    """The pattern's module, a script whose first long reply floods, and its options."""
    closing = "It is 42, as far as I got."
    if name == "react":
        return react, [FLOOD, closing], {}
    if name == "rewoo":
        plan = {"steps": [{"var": "E1", "tool": "calculator", "reason": "multiply",
                           "args": {"expression": "6*7"}}]}  # fmt: skip
        return rewoo, [plan, FLOOD, closing], {}
    if name == "plan_execute":
        return plan_execute, [Plan(steps=["Compute 6*7."]), FLOOD, closing], {}
    if name == "reflexion":
        return reflexion, [FLOOD, closing], {}
    raise AssertionError(name)


@FACES
@pytest.mark.parametrize("name", ["react", "rewoo", "plan_execute", "reflexion"])
def test_a_flood_is_cut_when_the_token_budget_runs_out_while_it_streams(
    name: str, face: str
) -> None:
    module, script, options = flooding(name)
    model = ScriptedChatModel(script=script)
    graph = module.build_graph(model, tools=[calculator()], token_budget=3000, **options)

    state = run(graph, face)

    assert state["outcome"]["status"] == "incomplete"
    (flood,) = stopped_events(state)
    assert flood["output_tokens"] < 3000  # cut while it streamed, not after 40,000 tokens
    assert len(flood["text"]) < len(FLOOD) / 4
    assert model.calls[-1].messages != model.calls[-2].messages  # the closing call came last
    assert len(model.calls) == len(script)  # exactly one call after the flood
    assert "42" in state["messages"][-1].text


@FACES
@pytest.mark.parametrize("name", ["react", "rewoo", "plan_execute", "reflexion"])
def test_a_reply_still_running_when_the_time_budget_ends_is_stopped_there(
    name: str, face: str
) -> None:
    module, script, options = flooding(name)
    slow = " ".join(["slow"] * 100)
    script = [slow if item is FLOOD else item for item in script]
    model = SlowWhenSlow(script=script)
    graph = module.build_graph(model, tools=[calculator()], time_budget=1, **options)

    started = time.monotonic()
    state = run(graph, face)

    assert time.monotonic() - started < 5
    assert state["outcome"]["status"] == "incomplete"
    (stopped,) = stopped_events(state)
    assert stopped["latency_ms"] < 2000
    assert len(model.calls) == len(script)  # the stopped reply, then one closing call
    assert "42" in state["messages"][-1].text


@FACES
def test_a_retry_is_announced_on_the_custom_stream(face: str) -> None:
    model = ScriptedChatModel(script=[TimeoutError("read timed out"), "fine"])
    graph = react.build_graph(model, tools=[calculator()], retry=FAST_RETRY)

    chunks = stream(graph, face, "custom")

    (retry,) = chunks
    assert retry["event"] == "retry"
    assert retry["text"].startswith("retrying in ")
    assert retry["attempt"] == 1
    assert len(model.calls) == 2


@FACES
def test_a_model_that_keeps_failing_ends_the_question_without_a_traceback(face: str) -> None:
    model = ScriptedChatModel(script=[ConnectionError("refused")], cycle=True)
    graph = react.build_graph(model, tools=[calculator()], retry=FAST_RETRY)

    state = run(graph, face)

    assert state["outcome"]["status"] == "incomplete"
    assert "failed 4 times" in state["outcome"]["reason"]
    assert len(model.calls) == 4  # the tries, and no closing call to a model that is down


def test_only_the_failed_call_is_tried_again_not_the_node() -> None:
    # a plan step's node makes one call; a retried call must not repeat the calls before it
    model = ScriptedChatModel(
        script=[Plan(steps=["Compute 6*7."]), TimeoutError("slow"), "42", {"response": "42"}]
    )
    graph = plan_execute.build_graph(model, tools=[calculator()], retry=FAST_RETRY)

    state = graph.invoke(ask())

    assert state["messages"][-1].text == "42"
    assert len(model.calls) == 4


def test_timeouts_from_a_run_only_tighten() -> None:
    limits = Limits(model_timeout=10, idle_timeout=60)

    assert limits.apply({"model_timeout": 5}).model_timeout == 5
    assert limits.apply({"model_timeout": 50}).model_timeout == 10
    assert limits.apply({"idle_timeout": 600}).idle_timeout == 60
    assert Limits(model_timeout=None).apply({"model_timeout": 2.5}).model_timeout == 2.5
    assert Limits().idle_timeout == 600


@pytest.mark.parametrize("value", [0, -1, "ten", True])
def test_bad_timeouts_are_refused(value: Any) -> None:
    with pytest.raises(ValueError, match="seconds"):
        AgentContext(model_timeout=value)


def test_a_judge_that_times_out_leaves_the_reflexion_answer_ungraded() -> None:
    def stalled_judge(messages: list[Any]) -> Judgement:
        time.sleep(30)  # on a worker thread the run leaves behind
        return Judgement(feedback="late", score=1.0)

    model = ScriptedChatModel(script=["It is 42.", stalled_judge])
    graph = reflexion.build_graph(model, tools=[calculator()], model_timeout=0.3)

    state = graph.invoke(ask())

    assert state["outcome"]["status"] == "incomplete"
    assert state["messages"][-1].text.startswith("It is 42.")
    assert len(model.calls) == 2


@FACES
def test_a_real_client_that_cannot_connect_is_retried_then_stops_cleanly(face: str) -> None:
    from langchain_openai import ChatOpenAI

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = ChatOpenAI(
        model="nobody", base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0
    )
    graph = react.build_graph(model, tools=[calculator()], retry=FAST_RETRY)

    chunks = stream(graph, face, ["custom", "values"])

    retries = [c for kind, c in chunks if kind == "custom" and c["event"] == "retry"]
    final = [c for kind, c in chunks if kind == "values"][-1]
    assert [r["attempt"] for r in retries] == [1, 2, 3]
    assert final["outcome"]["status"] == "incomplete"
    assert "Connection" in final["outcome"]["reason"]  # the client's own error, named


def test_a_tool_with_no_timeout_is_abandoned_at_the_idle_timeout() -> None:
    def wait_forever(item: str) -> str:
        """Look an item up, slowly."""
        time.sleep(30)
        return "late"

    model = ScriptedChatModel(script=[tool_call("wait_forever", item="x"), "It did not answer."])
    graph = react.build_graph(model, tools=[tool_spec(wait_forever, timeout=None)])

    started = time.monotonic()
    state = graph.invoke(ask(), context={"idle_timeout": 0.3})

    assert time.monotonic() - started < 5
    observation = next(m for m in state["messages"] if m.type == "tool")
    assert observation.status == "error"
    assert "late" not in observation.text
    assert state["messages"][-1].text == "It did not answer."
