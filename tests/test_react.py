"""The ReAct graph on a scripted model: answers, parallel calls, failures, budgets, retries."""

from __future__ import annotations

import asyncio
import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.metadata import outcome_of
from reasoning_graphs.nodes.model.retry import model_retry_policy
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from reasoning_graphs.tools.builtins import calculator
from reasoning_graphs.tools.spec import tool_spec
from tests.helpers.tool_log import ToolLog, sleeping_tool

FAST_RETRY = model_retry_policy(initial_interval=0.01)


def ask(question: str) -> dict:
    return {"messages": [HumanMessage(question)]}


def tool_messages(state: dict) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


def test_reaches_an_answer_through_a_tool() -> None:
    model = ScriptedChatModel(script=[tool_call("calculator", expression="23*17+4"), "It is 395."])
    graph = build_graph(model, tools=[calculator()])

    state = graph.invoke(ask("What is 23*17+4?"))

    observation = tool_messages(state)[0]
    assert observation.content == "395"
    assert state["messages"][-1].content == "It is 395."
    assert state["outcome"] == {"status": "answered"}
    kinds = [(e["kind"], e.get("tool")) for e in state["trajectory"]]
    assert kinds == [("thought", None), ("action", "calculator"), ("thought", None)]
    action = state["trajectory"][1]
    assert action["args"] == {"expression": "23*17+4"}
    assert action["observation"] == "395"
    assert all(e["input_tokens"] > 0 for e in state["trajectory"] if e["kind"] == "thought")
    # the observation was in the model's second prompt
    assert any(isinstance(m, ToolMessage) and m.content == "395" for m in model.prompts[1])


async def test_async_and_streaming_faces() -> None:
    script = [tool_call("calculator", expression="6*7"), "42"]
    graph = build_graph(ScriptedChatModel(script=script, cycle=True), tools=[calculator()])

    state = await graph.ainvoke(ask("6*7?"))
    assert state["messages"][-1].content == "42"

    nodes = [next(iter(chunk)) async for chunk in graph.astream(ask("6*7?"))]
    # nothing to approve or record between the call and the answer: no stop in between
    assert nodes == ["think", "act", "think"]
    sync_nodes = [next(iter(chunk)) for chunk in graph.stream(ask("6*7?"))]
    assert sync_nodes == nodes


def test_conversation_carries_across_turns(thread: dict) -> None:
    model = ScriptedChatModel(script=["Hello Ada.", "Your name is Ada."])
    graph = build_graph(model, tools=[calculator()], checkpointer=InMemorySaver())

    graph.invoke(ask("My name is Ada."), thread)
    state = graph.invoke(ask("What is my name?"), thread)

    second_prompt = [m.content for m in model.prompts[1]]
    assert "My name is Ada." in second_prompt
    assert "Hello Ada." in second_prompt
    assert state["messages"][-1].content == "Your name is Ada."


def test_parallel_calls_get_one_observation_each_matched_by_id(log: ToolLog) -> None:
    tools = [sleeping_tool(log, "lookup", 0.05, safe=True)]
    calls = tool_calls(*[("lookup", {"item": f"x{i}"}, f"id{i}") for i in range(4)])
    graph = build_graph(ScriptedChatModel(script=[calls, "done"]), tools=tools)

    state = graph.invoke(ask("look up four things"))

    observed = {m.tool_call_id: m.content for m in tool_messages(state)}
    assert observed == {f"id{i}": f"lookup done with x{i}" for i in range(4)}


def test_concurrency_safe_calls_overlap_in_time(log: ToolLog) -> None:
    tools = [sleeping_tool(log, "lookup", 0.4, safe=True)]
    calls = tool_calls(*[("lookup", {"item": str(i)}, None) for i in range(3)])
    graph = build_graph(ScriptedChatModel(script=[calls, "done"]), tools=tools)

    graph.invoke(ask("three lookups"))

    latest_start = max(run["start"] for run in log.runs)
    earliest_end = min(run["end"] for run in log.runs)
    assert len(log.runs) == 3
    assert latest_start < earliest_end, "the three read-only calls should have overlapped"


async def test_concurrency_safe_calls_overlap_in_async_runs(log: ToolLog) -> None:
    tools = [sleeping_tool(log, "lookup", 0.4, safe=True)]
    calls = tool_calls(*[("lookup", {"item": str(i)}, None) for i in range(3)])
    graph = build_graph(ScriptedChatModel(script=[calls, "done"]), tools=tools)

    await graph.ainvoke(ask("three lookups"))

    assert max(r["start"] for r in log.runs) < min(r["end"] for r in log.runs)


@pytest.mark.parametrize("attempt", range(5))
def test_stateful_calls_run_in_the_given_order_every_time(log: ToolLog, attempt: int) -> None:
    # Later calls are faster, so anything that ran them side by side would reorder them.
    tools = [
        sleeping_tool(log, "mkdir", 0.06, safe=False),
        sleeping_tool(log, "cd", 0.03, safe=False),
        sleeping_tool(log, "mv", 0.0, safe=False),
        sleeping_tool(log, "ls", 0.0, safe=True),
    ]
    calls = tool_calls(
        ("mkdir", {"item": "d"}, None),
        ("cd", {"item": "d"}, None),
        ("ls", {"item": "."}, None),
        ("mv", {"item": "f"}, None),
    )
    graph = build_graph(ScriptedChatModel(script=[calls, "done"]), tools=tools)

    state = graph.invoke(ask("set up"))

    assert log.names() == ["mkdir", "cd", "ls", "mv"]
    for earlier, later in zip(log.runs, log.runs[1:], strict=False):
        assert earlier["end"] <= later["start"]
    assert [m.name for m in tool_messages(state)] == ["mkdir", "cd", "ls", "mv"]


def test_every_failure_kind_becomes_an_observation() -> None:
    def explode(item: str) -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    def slow(item: str) -> str:
        """Never finishes in time."""
        time.sleep(2)
        return "late"

    tools = [
        calculator(),
        tool_spec(explode, concurrency_safe=True),
        tool_spec(slow, concurrency_safe=True, timeout=0.2),
    ]
    calls = tool_calls(
        ("no_such_tool", {"x": 1}, "unknown"),
        ("calculator", {"expr": "1+1"}, "bad_args"),
        ("explode", {"item": "a"}, "exception"),
        ("slow", {"item": "a"}, "timeout"),
    )
    malformed = AIMessage(
        content="",
        invalid_tool_calls=[
            {"name": "calculator", "args": "{oops", "id": "garbled", "error": "bad JSON"}
        ],
    )
    graph = build_graph(ScriptedChatModel(script=[calls, malformed, "recovered"]), tools=tools)

    state = graph.invoke(ask("try everything"))

    observations = {m.tool_call_id: m for m in tool_messages(state)}
    assert set(observations) == {"unknown", "bad_args", "exception", "timeout", "garbled"}
    assert all(m.status == "error" for m in observations.values())
    assert "calculator" in observations["unknown"].content  # lists the available tools
    assert "expression" in observations["bad_args"].content  # shows the schema
    assert "disk on fire" in observations["exception"].content
    assert "0.2" in observations["timeout"].content
    assert state["messages"][-1].content == "recovered"


def test_long_observations_are_cut_and_retrievable() -> None:
    from reasoning_graphs.tools.builtins import read_observation

    def dump(item: str) -> str:
        """Returns a long report."""
        return "HEAD" + "x" * 9000 + "TAIL"

    tools = [tool_spec(dump, max_observation_chars=500), read_observation()]
    script = [
        tool_call("dump", item="a", id="c1"),
        tool_call("read_observation", ref="obs-c1", offset=4000, length=6000),
        "ok",
    ]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=tools)

    state = graph.invoke(ask("dump"))

    kept, page = tool_messages(state)
    assert kept.content == "HEAD" + "x" * 9000 + "TAIL"  # the state keeps the tool's result
    (cut,) = [m for m in model.prompts[1] if isinstance(m, ToolMessage)]  # the model reads
    assert len(cut.content) <= 500
    assert cut.content.startswith("HEAD")
    assert cut.content.endswith("TAIL")
    assert "obs-c1" in cut.content
    assert state["observations"]["obs-c1"] == "HEAD" + "x" * 9000 + "TAIL"
    assert "TAIL" in page.content


def test_step_budget_ends_with_an_honest_incomplete_answer() -> None:
    counter = iter(range(1000))
    model = ScriptedChatModel(
        script=[lambda _: tool_call("calculator", expression=f"{next(counter)}+1")], cycle=True
    )
    graph = build_graph(model, tools=[calculator()], max_model_calls=3)

    state = graph.invoke(ask("count forever"))

    assert state["outcome"]["status"] == "incomplete"
    assert "3" in state["outcome"]["reason"]
    final = state["messages"][-1]
    assert isinstance(final, AIMessage)
    assert not final.tool_calls
    assert final.content == ""  # the model's own closing reply, as it wrote it
    assert "calculator(expression='2+1') returned 3" in outcome_of(final)["note"]
    assert len(tool_messages(state)) == 3
    # the closing call had tools switched off
    assert model.calls[-1].tool_choice == "none"


def test_token_budget_stops_the_run() -> None:
    model = ScriptedChatModel(
        script=[tool_call("calculator", expression="1+1"), "closing answer", "never reached"]
    )
    graph = build_graph(model, tools=[calculator()], token_budget=50)

    state = graph.invoke(ask("add"))

    assert state["outcome"]["status"] == "incomplete"
    assert "tokens" in state["outcome"]["reason"]
    assert state["messages"][-1].content.startswith("closing answer")
    assert len(model.calls) == 2


def test_a_repeated_call_is_answered_from_before_and_the_run_goes_on() -> None:
    script = [
        tool_call("calculator", expression="23*17+4"),
        tool_call("calculator", expression="23*17+4"),
        "The answer is 395.",
    ]
    graph = build_graph(ScriptedChatModel(script=script), tools=[calculator()])

    state = graph.invoke(ask("What is 23*17+4?"))

    first, repeat = tool_messages(state)
    assert repeat.response_metadata["decision"] == "reused"
    assert (repeat.content, repeat.status) == (first.content, first.status)  # the tool's own
    assert state["outcome"] == {"status": "answered"}  # a repeat alone ends nothing
    assert state["messages"][-1].content == "The answer is 395."
    executed = [e for e in state["trajectory"] if e["kind"] == "action" and e["decision"] == "auto"]
    assert len(executed) == 1


def test_finish_survives_a_failing_model() -> None:
    script = [tool_call("calculator", expression="2*3"), RuntimeError("model crashed")]
    graph = build_graph(ScriptedChatModel(script=script), tools=[calculator()], max_model_calls=1)

    state = graph.invoke(ask("2*3?"))

    assert state["outcome"]["status"] == "incomplete"
    assert "returned 6" in state["messages"][-1].content  # no reply: the note is the answer


class RateLimited(Exception):
    status_code = 429


class BadRequest(Exception):
    status_code = 400


def test_transient_model_errors_are_retried() -> None:
    model = ScriptedChatModel(script=[RateLimited("slow down"), TimeoutError("timed out"), "fine"])
    graph = build_graph(model, tools=[calculator()], retry=FAST_RETRY)

    state = graph.invoke(ask("hi"))

    assert state["messages"][-1].content == "fine"
    assert len(model.calls) == 3


def test_other_model_errors_are_not_retried() -> None:
    model = ScriptedChatModel(script=[BadRequest("bad key"), "never"])
    graph = build_graph(model, tools=[calculator()], retry=FAST_RETRY)

    with pytest.raises(BadRequest):
        graph.invoke(ask("hi"))
    assert len(model.calls) == 1


def test_context_overrides_limits_per_run() -> None:
    model = ScriptedChatModel(script=[tool_call("calculator", expression="1+1"), "x", "y"])
    graph = build_graph(model, tools=[calculator()], max_model_calls=10)

    state = graph.invoke(ask("hi"), context={"max_model_calls": 1})

    assert state["outcome"]["status"] == "incomplete"


def test_max_tool_calls_per_turn_refuses_the_rest(log: ToolLog) -> None:
    calls = tool_calls(*[("lookup", {"item": str(i)}, f"c{i}") for i in range(4)])
    tools = [sleeping_tool(log, "lookup", safe=True)]
    graph = build_graph(
        ScriptedChatModel(script=[calls, "ok"]), tools=tools, max_tool_calls_per_turn=2
    )

    state = graph.invoke(ask("many"))

    assert len(log.runs) == 2
    skipped = [m for m in tool_messages(state) if m.response_metadata["decision"] == "skipped"]
    assert {m.tool_call_id for m in skipped} == {"c2", "c3"}


def test_sync_invoke_works_inside_a_running_event_loop() -> None:
    graph = build_graph(ScriptedChatModel(script=["hi"]), tools=[calculator()])

    async def call_sync_from_async() -> str:
        return graph.invoke(ask("hello"))["messages"][-1].content

    assert asyncio.run(call_sync_from_async()) == "hi"


async def test_a_tool_raising_timeout_error_is_reported_as_its_own_failure() -> None:
    from reasoning_graphs.effects import adrive, drive
    from reasoning_graphs.tools.execute import execute_call
    from reasoning_graphs.tools.registry import ToolRegistry

    def flaky(item: str) -> str:
        """Raises its own timeout."""
        raise TimeoutError("upstream took too long")

    registry = ToolRegistry([flaky])
    result = await adrive(execute_call(registry, "flaky", {"item": "a"}, call_id="c"))
    on_sync_face = drive(execute_call(registry, "flaky", {"item": "a"}, call_id="c"))
    assert (on_sync_face.status, on_sync_face.content) == (result.status, result.content)

    assert result.status == "error"
    assert "upstream took too long" in result.content


def test_a_thread_forks_from_a_checkpoint_after_a_call_that_went_straight_to_act() -> None:
    script = [tool_call("calculator", expression="6*7"), "42", "It was 6*7."]
    graph = build_graph(ScriptedChatModel(script=script), [calculator()], InMemorySaver())
    config = {"configurable": {"thread_id": "fork"}}
    graph.invoke(ask("6*7?"), config)
    after_act = next(s for s in graph.get_state_history(config) if s.next == ("think",))
    assert after_act.values["messages"][-1].type == "tool"  # act was the last node

    forked = graph.update_state(after_act.config, {"messages": [HumanMessage("Which sum?")]})
    state = graph.invoke(None, forked)

    assert state["messages"][-1].content == "It was 6*7."  # the model's next scripted reply
    assert [m.type for m in state["messages"]][-3:] == ["tool", "human", "ai"]
