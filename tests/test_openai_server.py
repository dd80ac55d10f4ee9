"""Every pattern end to end against a real OpenAI-compatible server (llama.cpp's, with SmolLM2).

The model spec is ``openai:smollm2``, so each run goes through langchain-openai's
``ChatOpenAI`` and real HTTP. One graph object serves three runs in one process
and one event loop, in mixed order — ``invoke``, ``ainvoke``, ``astream`` —
because a client bound to one event loop used to break the next face ("Event
loop is closed"). The CLI runs each pattern in a subprocess too, through the
sync ``stream``.

The model is tiny and its answers vary, so the tests check structure only: the
run reaches its end without an exception, and the last message is an answer or
the outcome says honestly that the run is incomplete.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph

from openai_server import MAX_REPLY_TOKENS, MODEL_SPEC, OpenAIServer
from reasoning_graphs.cli import exits
from reasoning_graphs.graphs import PATTERNS, graph_builder, react
from reasoning_graphs.tools.builtins import calculator

pytestmark = pytest.mark.openai_server

QUESTION = "What is 23*17+4?"
MAX_STEPS = 3
TOKEN_BUDGET = 3000
"""Prompt and completion tokens per question: two or three calls of the tiny model."""
PATTERN_OPTIONS: dict[str, dict[str, Any]] = {
    "react": {},
    "react_text": {"max_format_errors": 1},
    "plan_execute": {"max_replans": 1, "max_plan_steps": 2},
    "rewoo": {},
    "llm_compiler": {"max_rounds": 1},
    "reflexion": {"max_trials": 1},
    "lats": {"max_expansions": 1, "candidates": 2, "max_depth": 2},
    "cot": {"samples": 2},
}
"""Small budgets per pattern: these tests check that runs end well, not what the model knows."""
OUTCOMES = {"answered", "incomplete"}
CLI_TIMEOUT = 240
"""Seconds a CLI run may take; below pytest's own timeout, so a slow run reports its output."""


def build(pattern: str) -> CompiledStateGraph:
    return graph_builder(pattern)(
        model=MODEL_SPEC,
        tools=[calculator()],
        checkpointer=InMemorySaver(),
        max_steps=MAX_STEPS,
        token_budget=TOKEN_BUDGET,
        **PATTERN_OPTIONS[pattern],
    )


def config(pattern: str, face: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": f"{pattern}-{face}"}}


def question() -> dict[str, Any]:
    return {"messages": [("user", QUESTION)]}


def assert_ended(graph: CompiledStateGraph, run: dict[str, Any]) -> AIMessage:
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
    return last


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
@pytest.mark.timeout(600)  # three runs
@pytest.mark.parametrize("pattern", list(PATTERNS))
async def test_one_graph_runs_on_both_faces_in_mixed_order(
    openai_server: OpenAIServer, pattern: str
) -> None:
    graph = build(pattern)

    run = config(pattern, "invoke")
    result = graph.invoke(question(), run)
    assert result["messages"][-1] == assert_ended(graph, run)

    run = config(pattern, "ainvoke")
    result = await graph.ainvoke(question(), run)
    assert result["messages"][-1] == assert_ended(graph, run)

    run = config(pattern, "astream")
    updates = [update async for update in graph.astream(question(), run, stream_mode="updates")]
    assert updates
    assert_ended(graph, run)


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
        "--max-steps",
        str(MAX_STEPS),
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
    assert lines[-1].startswith("Note: Thread: "), report


LONG_QUESTION = "Write a long story about a cat who learns to sail."


def streamed_stops(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in values["trajectory"] if e["kind"] == "thought" and e.get("stopped")]


@pytest.mark.parametrize("face", ["sync", "async"])
async def test_a_token_budget_cuts_a_real_reply_while_it_streams(
    openai_server: OpenAIServer, face: str
) -> None:
    from langchain_core.messages import HumanMessage, SystemMessage

    from reasoning_graphs.graphs import react
    from reasoning_graphs.nodes.prompts import REACT_SYSTEM
    from reasoning_graphs.nodes.tokens import estimate_tokens

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
    assert_ended(graph, run)
    run = config("react", "after-timeouts-sync")
    graph.invoke(question(), run)
    assert_ended(graph, run)


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
    command += ["--model", MODEL_SPEC, "--max-steps", "1", "--token-budget", str(TOKEN_BUDGET)]
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
            model=MODEL_SPEC, tools=[calculator()], max_steps=1, empty_result_streak=streak
        )
        state = graph.invoke({"messages": conversation})
        (thought, *_) = [e for e in state["trajectory"] if e["kind"] == "thought"]
        assert isinstance(state["messages"][-1], AIMessage)  # the server's reply was read
        return thought["input_tokens"]

    advised, plain = first_prompt_tokens(3), first_prompt_tokens(10)

    assert advised > plain + 20  # the advice was sent, and the server took it
