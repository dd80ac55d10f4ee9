"""Every pattern end to end against a real OpenAI-compatible server (llama.cpp's, with SmolLM2).

The model spec is ``openai:smollm2``, so each run goes through langchain-openai's
``ChatOpenAI`` and real HTTP. One graph object serves two runs in one process
and one event loop, a sync face then an async one — ``invoke``, then ``astream``
(the async path of ``ainvoke`` with streaming on top) — because a client bound to
one event loop used to break the next face ("Event loop is closed"). The CLI runs
each pattern in a subprocess too, through the sync ``stream``.

The model is tiny and its answers vary, so the tests check structure: the run
reaches its end without an exception, the last message is an answer or the
outcome says honestly that the run is incomplete, and every typed reply (plan,
replan, task plan, join, judgement, reflection) was read. The server streams a
call's name in every chunk and says a call cut at its length cap finished; a
typed reply may go unread only when it was cut there (SmolLM2 can write ReWOO and
LLM Compiler plans that never close within the cap), never because the call could
not be read.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from reasoning_graphs.checkpointers import open_checkpointer
from reasoning_graphs.cli import exits
from reasoning_graphs.context import Limits
from reasoning_graphs.effects import adrive, drive
from reasoning_graphs.graphs import PATTERNS, graph_builder, react
from reasoning_graphs.graphs.llm_compiler.dag import TaskPlan
from reasoning_graphs.graphs.llm_compiler.join import JoinDecision
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.reflexion.reflect import Reflection
from reasoning_graphs.models.resolve import resolve_model
from reasoning_graphs.nodes.model.call import CUT_REPLY, ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import RunScope, agent_setup
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.nodes.steps.verify import check_answer
from reasoning_graphs.tools.builtins import calculator
from tests.helpers.openai_server import MAX_REPLY_TOKENS, MODEL_SPEC, OpenAIServer

pytestmark = pytest.mark.openai_server

QUESTION = "What is 23*17+4?"
MAX_MODEL_CALLS = 3
TOKEN_BUDGET = 3000
"""Prompt and completion tokens per question: two or three calls of the tiny model."""
PATTERN_OPTIONS: dict[str, dict[str, Any]] = {
    "react": {},
    "react_text": {"max_format_errors": 1},
    "plan_execute": {"max_replans": 1, "max_plan_steps": 2},
    "plan_react": {"max_replans": 1, "max_plan_items": 2},
    "rewoo": {},
    "llm_compiler": {"max_rounds": 1},
    "reflexion": {"max_trials": 1},
    "lats": {"max_expansions": 1, "candidates": 2, "max_depth": 2},
    "cot": {"samples": 2},
    "tot": {"breadth": 2, "depth": 1, "beam": 1},
}
"""Small budgets per pattern: these tests check that runs end well, not what the model knows."""
OUTCOMES = {"answered", "incomplete"}
TYPED_CALLS = {
    "plan_execute": {"Plan"},
    "plan_react": {"PlanItems"},
    "rewoo": {"PlanSchema"},
    "llm_compiler": {"TaskPlan"},
    "reflexion": {"Judgement"},
    "lats": {"Judgement"},
}
"""The typed requests each pattern's run makes at least once with the small budgets."""
LONG_PLANS = {"rewoo", "llm_compiler"}
"""Patterns whose plans SmolLM2 may write on past the server's reply cap (a cut is read as
one); their typed requests are each read whole in ``test_every_typed_request_is_read…``."""
CLI_TIMEOUT = 240
"""Seconds a CLI run may take; below pytest's own timeout, so a slow run reports its output."""


def build(pattern: str) -> CompiledStateGraph:
    return graph_builder(pattern)(
        model=MODEL_SPEC,
        tools=[calculator()],
        checkpointer=InMemorySaver(),
        max_model_calls=MAX_MODEL_CALLS,
        token_budget=TOKEN_BUDGET,
        **PATTERN_OPTIONS[pattern],
    )


def config(pattern: str, face: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": f"{pattern}-{face}"}}


def question() -> dict[str, Any]:
    return {"messages": [("user", QUESTION)]}


def assert_ended(graph: CompiledStateGraph, run: dict[str, Any], pattern: str) -> AIMessage:
    """The run reached END with an answer, or with an outcome that says it is incomplete."""
    snapshot = graph.get_state(run)
    assert not snapshot.next, f"stopped before the end, at {snapshot.next}"
    assert not snapshot.interrupts
    values = snapshot.values
    outcome = values.get("outcome") or {}
    assert outcome.get("status") in OUTCOMES, outcome
    last = values["messages"][-1]
    assert isinstance(last, AIMessage), last
    assert not last.tool_calls, last
    assert last.text.strip() or outcome["status"] == "incomplete", values
    assert_typed_read(values, pattern)
    return last


def assert_typed_read(values: dict[str, Any], pattern: str) -> None:
    """The run made the pattern's typed requests, and read every reply that was not cut."""
    typed = [e for e in values["trajectory"] if e["kind"] == "thought" and "typed" in e]
    assert {e["typed"] for e in typed} >= TYPED_CALLS.get(pattern, set()), typed
    for event in typed:
        assert event.get("unread", CUT_REPLY) == CUT_REPLY, event
    if pattern in TYPED_CALLS and pattern not in LONG_PLANS:
        assert any("unread" not in e for e in typed), typed


def test_the_environment_points_the_openai_client_at_the_server(
    openai_server: OpenAIServer,
) -> None:
    # llama.cpp's server reads ``max_tokens``; langchain-openai sends ``max_completion_tokens``
    model = ChatOpenAI(model=openai_server.model, max_retries=0, extra_body={"max_tokens": 8})

    reply = model.invoke("Say hello.")

    assert isinstance(reply, AIMessage)
    assert reply.response_metadata["model_name"] == openai_server.model
    assert reply.usage_metadata
    assert 0 < reply.usage_metadata["output_tokens"] <= 8


def test_model_specs_reach_the_server_with_replies_capped(openai_server: OpenAIServer) -> None:
    from reasoning_graphs.models.resolve import resolve_model

    reply = resolve_model(MODEL_SPEC).invoke("Tell me a long story about a dragon.")

    assert isinstance(reply, AIMessage)
    assert reply.response_metadata["model_name"] == openai_server.model
    assert reply.usage_metadata
    assert reply.usage_metadata["output_tokens"] <= MAX_REPLY_TOKENS


# One event loop for every async test here, as in one program: langchain-openai keeps one
# async HTTP client per base URL for the whole process, and its pooled connections belong
# to the loop that opened them.
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.timeout(600)  # two runs
@pytest.mark.parametrize("pattern", list(PATTERNS))
async def test_one_graph_runs_on_both_faces_in_mixed_order(
    openai_server: OpenAIServer, pattern: str
) -> None:
    graph = build(pattern)

    run = config(pattern, "invoke")
    result = graph.invoke(question(), run)
    assert result["messages"][-1] == assert_ended(graph, run, pattern)

    run = config(pattern, "astream")
    updates = [update async for update in graph.astream(question(), run, stream_mode="updates")]
    assert updates
    assert_ended(graph, run, pattern)


TYPED_EXAMPLES: dict[type[BaseModel], dict[str, Any]] = {
    Plan: {"steps": ["Compute 23*17+4."]},
    Replan: {"response": "395", "steps": []},
    TaskPlan: {"tasks": [{"id": 1, "tool": "calculator", "args": {"expression": "23*17+4"}}]},
    JoinDecision: {"replan": False, "answer": "395", "reason": ""},
    Judgement: {"feedback": "Correct.", "score": 1.0},
    Reflection: {"diagnosis": "The sum was wrong.", "advice": "Add again."},
}
"""The typed requests of the patterns, with the reply the prompt asks for. ReWOO's plan
(``PlanSchema``) is left to ReWOO's runs: SmolLM2 writes its steps on until the cap cuts
them, whatever the prompt, so there it can only be read as cut."""
FACES = {"streamed": "async", "whole": "sync"}
"""A budget makes a call stream (as LangGraph's ``messages`` mode does); without one the
reply comes whole. The pattern runs below take every other combination."""


def typed_prompt(schema: type[BaseModel]) -> list[BaseMessage]:
    example = json.dumps(TYPED_EXAMPLES[schema])
    order = f"Reply by calling {schema.__name__} with exactly these arguments: {example}"
    return [SystemMessage(order), HumanMessage(QUESTION)]


def named(reply_message: AIMessage) -> list[str | None]:
    return [call["name"] for call in [*reply_message.tool_calls, *reply_message.invalid_tool_calls]]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("delivery", list(FACES))
@pytest.mark.parametrize("schema", list(TYPED_EXAMPLES), ids=lambda schema: schema.__name__)
async def test_every_typed_request_is_read_from_the_server(
    openai_server: OpenAIServer, schema: type[BaseModel], delivery: str
) -> None:
    limits = Limits(token_budget=100_000) if delivery == "streamed" else Limits()
    run = RunScope(agent_setup(resolve_model(MODEL_SPEC), []), limits)

    body = call_model(run, ModelRequest(prompt=typed_prompt(schema), schema=schema))
    reply = drive(body) if FACES[delivery] == "sync" else await adrive(body)

    assert named(reply.message) == [schema.__name__], reply.message
    assert isinstance(reply.parsed, schema), reply.event
    assert "unread" not in reply.event


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("delivery", list(FACES))
async def test_a_native_tool_call_is_read_from_the_server(
    openai_server: OpenAIServer, delivery: str
) -> None:
    limits = Limits(token_budget=100_000) if delivery == "streamed" else Limits()
    run = RunScope(agent_setup(resolve_model(MODEL_SPEC), [calculator()]), limits)
    (tool,) = [tool for tool in run.setup.registry.tools() if tool.name == "calculator"]
    order = 'Reply by calling calculator with exactly these arguments: {"expression": "23*17+4"}'
    prompt = [SystemMessage(order), HumanMessage(QUESTION)]
    request = ModelRequest(prompt=prompt, tools=[tool], tool_choice=tool.name)

    body = call_model(run, request)
    reply = drive(body) if FACES[delivery] == "sync" else await adrive(body)

    assert [call["name"] for call in reply.message.tool_calls] == [tool.name], reply.message
    assert reply.message.tool_calls[0]["args"] == {"expression": "23*17+4"}


def cli_env(server: OpenAIServer) -> dict[str, str]:
    """This process's environment, pointed at the server, with LangSmith off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    env.pop("REASONING_GRAPHS_MODEL", None)
    env.update(server.env)
    return env


def run_cli(
    command: list[str], server: OpenAIServer
) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run the command against the server; its result and a report for failed assertions."""
    done = subprocess.run(
        command,
        env=cli_env(server),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    report = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}\nserver:\n{server.output()}"
    return done, report


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_the_cli_runs_every_pattern_to_an_answer(
    openai_server: OpenAIServer, pattern: str, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    command = [
        sys.executable,
        "-m",
        "reasoning_graphs",
        "--db",
        str(tmp_path / "threads.sqlite"),
        "run",
        QUESTION,
        "--pattern",
        pattern,
        "--model",
        MODEL_SPEC,
        "--max-model-calls",
        str(MAX_MODEL_CALLS),
        "--token-budget",
        str(TOKEN_BUDGET),
        "--workspace",
        str(workspace),
        # model-written shell commands must never run on the test machine
        "--reject-all",
    ]

    done, report = run_cli(command, openai_server)
    # answered, or stopped honestly within the small budgets
    assert done.returncode in (exits.ANSWERED, exits.INCOMPLETE), report
    lines = done.stdout.splitlines()
    assert any(line.startswith("Answer: ") for line in lines), report
    (thread,) = THREAD.findall(lines[-1])
    assert_typed_read(saved_values(tmp_path / "threads.sqlite", pattern, thread), pattern)


THREAD = re.compile(r"--thread (\w+)")


def saved_values(db: Path, pattern: str, thread: str) -> dict[str, Any]:
    """The state the CLI saved for ``thread``, read through the pattern's graph."""
    with open_checkpointer(db) as saver:
        graph = graph_builder(pattern)(model=MODEL_SPEC, checkpointer=saver)
        return graph.get_state({"configurable": {"thread_id": thread}}).values


LONG_QUESTION = "Write a long story about a cat who learns to sail."


def streamed_stops(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in values["trajectory"] if e["kind"] == "thought" and e.get("stopped")]


@pytest.mark.parametrize("face", ["sync", "async"])
async def test_a_token_budget_cuts_a_real_reply_while_it_streams(
    openai_server: OpenAIServer, face: str
) -> None:
    from langchain_core.messages import HumanMessage, SystemMessage

    from reasoning_graphs.graphs import react
    from reasoning_graphs.nodes.model.tokens import estimate_tokens
    from reasoning_graphs.nodes.steps.prompts import REACT_SYSTEM

    prompt = [SystemMessage(REACT_SYSTEM), HumanMessage(LONG_QUESTION)]
    budget = estimate_tokens(prompt) + 12  # room for a dozen streamed tokens
    graph = react.build_graph(MODEL_SPEC, tools=[calculator()], token_budget=budget)
    request = {"messages": [("user", LONG_QUESTION)]}

    values = graph.invoke(request) if face == "sync" else await graph.ainvoke(request)

    (cut,) = streamed_stops(values)
    assert cut["output_tokens"] < MAX_REPLY_TOKENS / 2  # stopped mid-reply, not at its end
    assert values["outcome"]["status"] == "incomplete"
    thoughts = [e for e in values["trajectory"] if e["kind"] == "thought"]
    assert len(thoughts) == 2  # the cut reply and one closing call
    assert isinstance(values["messages"][-1], AIMessage)


async def test_a_real_call_past_its_timeout_is_left_and_the_client_still_works(
    openai_server: OpenAIServer,
) -> None:
    from reasoning_graphs.graphs import react

    graph = react.build_graph(MODEL_SPEC, tools=[calculator()], checkpointer=InMemorySaver())
    request = {"messages": [("user", LONG_QUESTION)]}
    tight = {"model_timeout": 0.05}

    for number, face in enumerate(("sync", "async", "sync")):
        run = {"configurable": {"thread_id": f"timeout-{number}-{face}"}}
        if face == "sync":
            values = graph.invoke(request, run, context=tight)
        else:
            values = await graph.ainvoke(request, run, context=tight)
        assert values["outcome"]["status"] == "incomplete"
        assert all(e.get("halt") for e in streamed_stops(values))
        assert len(streamed_stops(values)) == 1

    # the abandoned streams left the client and the server usable, on both faces
    run = config("react", "after-timeouts")
    await graph.ainvoke(question(), run)
    assert_ended(graph, run, "react")
    run = config("react", "after-timeouts-sync")
    graph.invoke(question(), run)
    assert_ended(graph, run, "react")


def test_a_spec_model_survives_one_event_loop_after_another(openai_server: OpenAIServer) -> None:
    import asyncio

    graph = graph_builder("cot")(model=MODEL_SPEC)  # the model is resolved from its spec

    for _ in range(3):  # each asyncio.run closes its loop; the next one must not reuse it
        values = asyncio.run(graph.ainvoke(question()))
        assert values["outcome"]["status"] in OUTCOMES
    values = graph.invoke(question())
    assert values["outcome"]["status"] in OUTCOMES


def test_the_bench_measures_a_real_server_from_concurrent_cells(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "bench"
    command = [sys.executable, "-m", "reasoning_graphs", "bench", "--suite", "arithmetic"]
    command += ["--limit", "1", "--patterns", "react", "--repeat", "2", "--concurrency", "2"]
    command += [
        "--model",
        MODEL_SPEC,
        "--max-model-calls",
        "1",
        "--token-budget",
        str(TOKEN_BUDGET),
    ]
    command += ["--out", str(out), "--no-charts"]

    done, report = run_cli(command, openai_server)
    assert done.returncode == 0, report
    records = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert len(records) == 2, report
    for record in records:
        # one shared client served both threads; the server reports no usage on a
        # streamed reply, so the tokens are the pattern's estimates, and say so
        assert record["error"] is None, record
        assert record["model_calls"] >= 1
        assert record["tokens_estimated"], record
        assert record["prompt_tokens"] > 0, record
        assert record["completion_tokens"] > 0, record


def test_the_guards_advice_reaches_a_real_server_after_the_tool_results(
    openai_server: OpenAIServer,
) -> None:
    # a conversation whose latest round brought three empty results: the next prompt ends
    # with the advice to change strategy, as a user turn after the tool messages
    calls = [
        {"name": "calculator", "args": {"expression": f"{n}*0"}, "id": f"c{n}", "type": "tool_call"}
        for n in range(3)
    ]
    conversation = [
        HumanMessage(QUESTION),
        AIMessage("", tool_calls=calls),
        *(ToolMessage("", tool_call_id=f"c{n}", name="calculator") for n in range(3)),
    ]

    def first_prompt_tokens(streak: int) -> int:
        graph = react.build_graph(
            model=MODEL_SPEC, tools=[calculator()], max_model_calls=1, empty_result_streak=streak
        )
        state = graph.invoke({"messages": conversation})
        (thought, *_) = [e for e in state["trajectory"] if e["kind"] == "thought"]
        assert isinstance(state["messages"][-1], AIMessage)  # the server's reply was read
        return thought["input_tokens"]

    advised, plain = first_prompt_tokens(3), first_prompt_tokens(10)

    assert advised > plain + 20  # the advice was sent, and the server took it


def test_the_verify_reply_is_read_from_the_server(openai_server: OpenAIServer) -> None:
    total = {"name": "calculator", "args": {"expression": "23*17+4"}, "id": "c1"}
    state: dict[str, Any] = {
        "messages": [
            HumanMessage(QUESTION),
            AIMessage("", tool_calls=[{**total, "type": "tool_call"}]),
            ToolMessage("395", tool_call_id="c1", name="calculator"),
            AIMessage("23*17+4 is 395."),
        ],
        "trajectory": [],
        "outcome": {"status": "answered"},
    }
    run = RunScope(agent_setup(resolve_model(MODEL_SPEC), [calculator()]), Limits(verify=True))

    verification, records = drive(check_answer(run, state))  # type: ignore[arg-type]

    (thought, *_) = [r for r in records if r["kind"] == "thought"]
    assert thought["typed"] == "AnswerCheck"
    # read, or cut by the reply cap and said so: what the 135M model writes depends on the
    # CPU's kernels (it stays within the cap on AVX2, not on AVX-512); never misread
    if "unread" in thought:
        assert thought["unread"] == CUT_REPLY, thought
        assert verification["status"] == "failed", verification
        assert CUT_REPLY in verification["reason"]
    else:
        assert verification["status"] == "checked", verification


def test_a_reflection_reply_is_read_from_the_server(openai_server: OpenAIServer) -> None:
    # a finished round placed on the thread: the loop reflects on it before thinking again
    graph = react.build_graph(
        model=MODEL_SPEC,
        tools=[calculator()],
        checkpointer=InMemorySaver(),
        reflect_every=1,
    )
    thread: Any = {"configurable": {"thread_id": "reflect"}}
    call = {"name": "calculator", "args": {"expression": "23*17+4"}, "id": "c1"}
    round_done = [
        HumanMessage(QUESTION),
        AIMessage("I compute it with the calculator.", tool_calls=[{**call, "type": "tool_call"}]),
        ToolMessage("395", tool_call_id="c1", name="calculator"),
    ]
    graph.update_state(thread, {"messages": round_done}, as_node="act")

    state = graph.invoke(None, thread, interrupt_after=["reflect"])  # one call: the reflection

    (reflection,) = [e for e in state["trajectory"] if e.get("reflection")]
    assert reflection["text"].strip(), reflection
    assert "stopped" not in reflection, reflection
    assert reflection["output_tokens"] > 0


def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def test_a_typed_react_step_is_read_from_the_server(openai_server: OpenAIServer) -> None:
    graph = react.build_graph(
        model=MODEL_SPEC,
        tools=[add],  # a short description keeps the prompt, and the test, short
        checkpointer=InMemorySaver(),
        step_format="structured",
    )
    thread: Any = {"configurable": {"thread_id": "typed-step"}}

    asked = {"messages": [("user", "What is 2+3?")]}
    state = graph.invoke(asked, thread, interrupt_after=["think"])  # one call: the step

    (thought,) = [e for e in state["trajectory"] if e["kind"] == "thought"]
    assert thought["typed"] == "Step"
    assert "unread" not in thought, thought
    assert 0 <= thought["confidence"] <= 1
    step = state["messages"][-1]
    assert step.tool_calls or step.text.strip(), step  # a tool call to run, or the answer
