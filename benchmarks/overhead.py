"""Orchestration cost: our ReAct graphs against LangChain's ``create_agent``, same model and tool.

Each agent gets the same scripted model (no latency) and the same trivial
``echo`` tool, so every millisecond measured is the agent's own bookkeeping:
graph steps, state merges, budgets and loop guards, checkpoints. The model's
script is N tool calls, each with a new argument, then a text answer; the
text-format graph (``react_text``) gets the same calls written as
``Thought / Action / Action Input`` replies. Each run checks that it made
exactly N tool calls and ended on the scripted answer.

Every measurement runs in its own fresh process, interleaved: in each trial
``react``, then ``create_agent``, then ``react_text``, and both of our graphs
are divided by the ``create_agent`` run of the same trial.

- short: one question of one round (model, tool, model), ms per question,
  averaged over ``--invocations`` questions after a warm-up question, each on
  a new thread when there is a checkpointer;
- long: one question of ``--rounds`` rounds: ms per tool round over the whole
  run, the per-round time early (rounds 50-100) and late (the last 50 rounds)
  taken from the tool's own clock, peak RSS of the process and how much the
  peak grew during the run.

Checkpointers: none, LangGraph's ``InMemorySaver``, and LangGraph's
``SqliteSaver`` on a temp file, the same class for both sides.

Where the time goes (two cores; docs/cost.md's "Orchestration cost" has the
table of three trials). A short question costs 1.14-1.19x ``create_agent``'s
without a checkpointer (2.8-3.1 against 2.5-2.6 ms; ``react_text``
1.30-1.34x), 1.14-1.19x with the InMemorySaver, 0.97-1.04x on SQLite and
1.01-1.29x on SQLite with async durability; on these shared cores a ratio of
the same build moves by up to 0.15 between runs, so a change to the short
question is better judged by instructions under callgrind (``react`` 12.1
million per question, ``react_text`` 13.0, ``create_agent`` 10.2, the bare
loop 9.1; docs/cost.md's "Instructions per question" has the table). Two
reference agents run beside it to show why: ``react-untimed``
(ours with the model and tool timeouts off, 1.09-1.10x) and ``langgraph-bare``
(a plain LangGraph loop of a model node and a tool node with no guards,
0.80-0.83x). With a timeout on, each model and tool call runs on a worker
thread so that the sync face can give up on a call stuck in a blocking read:
three hand-offs per question, 10-50 us each on an idle machine, milliseconds
when the waiting thread loses its core to another process. A question is three
steps in each of them. Long runs are where ours is cheaper: at 1000 rounds on
SQLite 0.31-0.45x the time per round (8.7-10
against 22-28 ms) and 0.88x the peak RSS (113 against 129 MB); with the
InMemorySaver 0.32-0.43x and 0.20x (125 against 627 MB), because the
conversation, trajectory and stored observations are delta channels (a step's
checkpoint holds what it added) and every question a step asks of the history
is a running fold that reads only what was added since the step before.
``sqlite-async`` (ours saving each step while the next one runs, as
``create_agent`` does) costs the same as ``sqlite`` within the noise once the
checkpoints are deltas.

Profile (``--profile --profile-rounds 1000``: one 1000-round ``react`` run on
SQLite under cProfile, every thread merged, 24 s): half the run is the model
call itself, LangChain's generate plumbing and the scripted model counting its
ever longer prompt (``count_tokens_approximately``, 7.2 s, the one cost here
that grows with the run, and one every agent pays); the rest is mostly
LangGraph's step machinery (routing, task preparation, channel updates,
checkpoint writes). No function of ours that reads the history reaches the top
25 any more. On a short question (py-spy over thousands of them, untimed) our
own steps' bookkeeping is about a fifth of a question, spread thin: no guard
more than a few per cent.

``--instructions`` counts instructions under valgrind's callgrind instead of
time: per short question for every agent, face and saver, then per round early
(rounds 51-100) and late (the last 50) in one ``--instruction-rounds`` run of
each agent, with and without the window context, so a cost that grows with the
run shows without the noise of shared cores.

Run: python benchmarks/overhead.py [--pairs 3] [--rounds 300] [--ours react react_text]
     [--checkpointers none memory sqlite sqlite-async] [--invocations 100] [--no-short]
     [--context] [--quick] [--profile]
     python benchmarks/overhead.py --instructions [--invocations 50] [--instruction-rounds 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import AnyMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from reasoning_graphs.testing import ScriptedChatModel, tool_call

OURS = ("react", "react_text")
THEIRS = "create_agent"
DEFAULTED = "create_agent+defaults"
"""``create_agent`` with the middleware that gives it what ``react`` does by default: approvals
(``HumanInTheLoopMiddleware``), a model-call budget (``ModelCallLimitMiddleware``, 10 as
ours), a tool-call limit (``ToolCallLimitMiddleware``) and tool retries
(``ToolRetryMiddleware``)."""
UNTIMED = "react-untimed"
"""Our ``react`` with its default tool and idle timeouts off: each call then runs on the
graph's own thread instead of a worker the run can walk away from."""
BARE = "langgraph-bare"
"""The least any LangGraph agent pays: a model node, a tool node, no guards (:func:`bare_loop`)."""
REFERENCES = (UNTIMED, BARE)
"""Measured with the short questions only, to show where ours stands between the two."""
CHECKPOINTERS = ("none", "memory", "sqlite", "sqlite-async")
LABELS = {
    "none": "no checkpointer",
    "memory": "InMemorySaver",
    "sqlite": "SqliteSaver (file)",
    "sqlite-async": "SqliteSaver (file), ours with LangGraph's default async durability",
}
"""``sqlite`` runs ours as built, saving each step before the next starts (``durability="sync"``);
``sqlite-async`` runs them as ``create_agent`` runs, saving while the next step runs: the
difference between the two is what durable-by-default costs."""
INSTRUCTION_AGENTS = ("react", "react_text", THEIRS, DEFAULTED, UNTIMED, BARE)
INSTRUCTION_SAVERS = ("none", "memory", "sqlite")
FACES = ("sync", "async")
INSTRUCTION_QUESTIONS = 50
"""Questions counted under callgrind after the warm-up (``--instructions``)."""
READY, DONE = "ready", "done"
"""What a counted child prints when it waits for its instrumentation to be switched."""
CONTEXT_STRATEGY = "window"
"""The prompt-fitting strategy of ``--context`` runs (the last 20 messages and the question)."""
QUESTION = {"messages": [("user", "Echo each round, then say done.")]}
ANSWER = "done"
STAMPS: list[float] = []
"""When each call of the tool ran (``time.perf_counter``), in order."""


SWITCHES: dict[int, str] = {}
"""Tool calls after which a counted long run waits for callgrind to be switched, by number."""


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    STAMPS.append(time.perf_counter())
    if len(STAMPS) in SWITCHES:
        wait_for_switch(SWITCHES[len(STAMPS)])
    return text


class ScriptModel(ScriptedChatModel):
    """The scripted model, keeping only the last prompt it received.

    ``ScriptedChatModel`` records every prompt; a graph that builds its prompt
    afresh for each call (``react_text`` writes the history out as text) would
    then hold N prompts of up to 2N messages each, and the peak RSS would
    measure the recorder instead of the agent.
    """

    def _choose_reply(self, record: Any) -> Any:
        del self.calls[:-1]
        return super()._choose_reply(record)


def script(agent: str, rounds: int) -> list[Any]:
    """``rounds`` calls of ``echo``, each with a new argument, then the answer."""
    if agent == "react_text":
        steps = [
            f'Thought: round {n}.\nAction: echo\nAction Input: {{"text": "round {n}"}}'
            for n in range(1, rounds + 1)
        ]
        return [*steps, f"Thought: that was the last round.\nFinal Answer: {ANSWER}"]
    return [*(tool_call("echo", text=f"round {n}") for n in range(1, rounds + 1)), ANSWER]


def open_saver(kind: str, directory: str) -> Any:
    """A fresh saver of ``kind`` (``None`` for no checkpointer), the same class for every agent;
    LangGraph's ``SqliteSaver`` gets an async face (each async method in a worker thread, as
    ours does), so the async face can run on it."""
    if kind == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver()
    if kind.startswith("sqlite"):
        from langgraph.checkpoint.sqlite import SqliteSaver

        from reasoning_graphs.checkpointers import ThreadedAsync

        class ThreadedSqliteSaver(ThreadedAsync, SqliteSaver):
            """LangGraph's sync-only ``SqliteSaver``, its async methods on a worker thread."""

        path = Path(directory) / "runs.sqlite"
        return ThreadedSqliteSaver(sqlite3.connect(path, check_same_thread=False))
    return None


class BareState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def bare_loop(model: ScriptModel, saver: Any) -> Any:
    """A ReAct loop in plain LangGraph with nothing but the loop: ``think`` calls the
    model with the tool bound, ``act`` runs the reply's calls in order on the graph's
    thread, and a reply without calls ends the run. No budgets, timeouts, approvals,
    id checks or reports: the floor under every LangGraph agent's cost."""
    bound = model.bind_tools([echo])

    def think(state: BareState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    def act(state: BareState) -> dict[str, Any]:
        calls = state["messages"][-1].tool_calls
        return {"messages": [echo.invoke(call) for call in calls]}

    def after_think(state: BareState) -> str:
        return "act" if state["messages"][-1].tool_calls else END

    graph = StateGraph(BareState)
    graph.add_node("think", think)
    graph.add_node("act", act)
    graph.add_edge(START, "think")
    graph.add_conditional_edges("think", after_think, ["act", END])
    graph.add_edge("act", "think")
    return graph.compile(checkpointer=saver)


def build(agent: str, model: ScriptModel, saver: Any, context: bool = False) -> Any:
    """The agent under test; ours get no step limit, so that N rounds fit, and with
    ``context`` the context manager (:data:`CONTEXT_STRATEGY`)."""
    options: dict[str, Any] = {"max_model_calls": None}
    if context:
        options["context_strategy"] = CONTEXT_STRATEGY
    if agent == BARE:
        return bare_loop(model, saver)
    if agent in ("react", UNTIMED):
        from reasoning_graphs.graphs.react import build_graph

        if agent == UNTIMED:
            options.update(tool_timeout=None, idle_timeout=None)
        return build_graph(model, [echo], saver, **options)
    if agent == "react_text":
        from reasoning_graphs.graphs.react_text import build_graph as build_text_graph

        return build_text_graph(model, [echo], saver, **options)
    from langchain.agents import create_agent

    if agent == DEFAULTED:
        return create_agent(model, [echo], checkpointer=saver, middleware=default_middleware())
    return create_agent(model, [echo], checkpointer=saver)


def default_middleware() -> list[Any]:
    """The middleware of :data:`DEFAULTED`."""
    from langchain.agents.middleware import (
        HumanInTheLoopMiddleware,
        ModelCallLimitMiddleware,
        ToolCallLimitMiddleware,
        ToolRetryMiddleware,
    )

    return [
        HumanInTheLoopMiddleware(interrupt_on={}),
        ModelCallLimitMiddleware(run_limit=10),
        ToolCallLimitMiddleware(run_limit=100),
        ToolRetryMiddleware(),
    ]


def config(rounds: int, thread: str, agent: str = THEIRS, kind: str = "none") -> dict[str, Any]:
    """The run's config; ``sqlite-async`` runs ours with LangGraph's default durability."""
    run: dict[str, Any] = {
        "recursion_limit": 10 * rounds + 100,
        "configurable": {"thread_id": thread},
    }
    if kind == "sqlite-async" and agent not in (THEIRS, DEFAULTED):
        run["durability"] = "async"
    return run


def check(agent: str, result: dict[str, Any], rounds: int) -> None:
    """The run made exactly ``rounds`` tool calls and ended on the scripted answer."""
    messages = result["messages"]
    calls = sum(isinstance(message, ToolMessage) for message in messages)
    if calls != rounds or messages[-1].content != ANSWER:
        raise SystemExit(
            f"{agent}: {calls} tool calls (wanted {rounds}), last message {messages[-1].content!r}"
        )


def peak_kb() -> int:
    """Peak resident set size of this process so far (KB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def per_round(first: int, last: int) -> float:
    """Milliseconds per round between the tool calls of rounds ``first`` and ``last``."""
    return (STAMPS[last - 1] - STAMPS[first - 1]) * 1000 / (last - first)


def window(rounds: int) -> int:
    """Rounds in the early and the late window: 50, fewer on short runs."""
    return max(1, min(50, rounds // 4))


def run_short(agent: str, kind: str, invocations: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        model = ScriptModel(script=script(agent, 1), cycle=True)
        graph = build(agent, model, open_saver(kind, directory))
        check(agent, graph.invoke(QUESTION, config(1, "warm-up", agent, kind)), 1)
        start = time.perf_counter()
        for number in range(invocations):
            result = graph.invoke(QUESTION, config(1, f"question-{number}", agent, kind))
        elapsed = time.perf_counter() - start
        check(agent, result, 1)
        if len(STAMPS) != invocations + 1:
            raise SystemExit(f"{agent}: the tool ran {len(STAMPS)} times")
        return {"ms": elapsed * 1000 / invocations, "peak_kb": peak_kb()}


def run_long(agent: str, kind: str, rounds: int, context: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        model = ScriptModel(script=script(agent, rounds))
        graph = build(agent, model, open_saver(kind, directory), context)
        before = peak_kb()
        start = time.perf_counter()
        result = graph.invoke(QUESTION, config(rounds, "long", agent, kind))
        elapsed = time.perf_counter() - start
        check(agent, result, rounds)
        if len(STAMPS) != rounds:
            raise SystemExit(f"{agent}: the tool ran {len(STAMPS)} times")
        span = window(rounds)
        return {
            "ms": elapsed * 1000 / rounds,
            "early": per_round(span, 2 * span),
            "late": per_round(rounds - span, rounds),
            "peak_kb": peak_kb(),
            "growth_kb": peak_kb() - before,
        }


def asker(graph: Any, agent: str, kind: str, face: str) -> Callable[[str], dict[str, Any]]:
    """One question on a new thread, on ``face``; the async face keeps one event loop for
    every question, as a program would."""
    if face == "sync":
        return lambda thread: graph.invoke(QUESTION, config(1, thread, agent, kind))
    loop = asyncio.new_event_loop()
    return lambda thread: loop.run_until_complete(
        graph.ainvoke(QUESTION, config(1, thread, agent, kind))
    )


def wait_for_switch(mark: str) -> None:
    """Say ``mark`` and wait until the parent has switched callgrind's instrumentation."""
    print(mark, flush=True)
    sys.stdin.readline()


def run_counted(agent: str, kind: str, face: str, questions: int) -> dict[str, Any]:
    """Short questions under callgrind: a warm-up uncounted, then ``questions`` counted."""
    with tempfile.TemporaryDirectory() as directory:
        model = ScriptModel(script=script(agent, 1), cycle=True)
        graph = build(agent, model, open_saver(kind, directory))
        ask = asker(graph, agent, kind, face)
        check(agent, ask("warm-up"), 1)
        wait_for_switch(READY)
        for number in range(questions):
            result = ask(f"question-{number}")
        wait_for_switch(DONE)
        check(agent, result, 1)
        return {"questions": questions}


def count_instructions(agent: str, kind: str, face: str, questions: int) -> float:
    """Instructions per question of ``agent`` (every thread), under valgrind's callgrind with
    instrumentation switched on only while the counted questions run."""
    arguments = ["--child", agent, "--mode", "instructions", "--kind", kind, "--face", face]
    (counted,) = count_windows([*arguments, "--invocations", str(questions)], agent)
    return counted / questions


def count_windows(arguments: list[str], label: str, script: str = __file__) -> list[int]:
    """Instructions of each counted stretch of ``script`` (this file) run with ``arguments``
    under callgrind (every thread). The child says :data:`READY` before a stretch and
    :data:`DONE` after it (:func:`wait_for_switch`), and waits each time until the
    instrumentation is switched."""
    with tempfile.TemporaryDirectory() as directory:
        out = Path(directory) / "callgrind.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={out}",
            sys.executable,
            script,
            *arguments,
        ]
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert process.stdin is not None
        assert process.stdout is not None
        switches = {READY: [["--instr=on"]], DONE: [["--instr=off"], ["--dump"]]}
        for line in process.stdout:
            for switch in switches.get(line.strip(), []):
                control = ["callgrind_control", *switch, str(process.pid)]
                subprocess.run(control, capture_output=True, check=True)
            if line.strip() in switches:
                process.stdin.write("go\n")
                process.stdin.flush()
        if process.wait():
            raise SystemExit(f"{label} ({' '.join(arguments)}) under callgrind failed")
        dumps = sorted(Path(directory).glob("callgrind.out.*"), key=lambda p: int(p.suffix[1:]))
        if not dumps:
            raise SystemExit(f"{label} ended under callgrind before a counted stretch")
        return [_totals(dump) for dump in dumps]


def _totals(dump: Path) -> int:
    return int(
        next(line for line in dump.read_text().splitlines() if line.startswith("totals:")).split()[
            1
        ]
    )


def run_long_counted(agent: str, kind: str, rounds: int, context: bool) -> dict[str, Any]:
    """One long run under callgrind, counted in two windows of :func:`window` rounds:
    after round 50 up to round 100, and the last rounds (see :func:`count_windows`)."""
    span = window(rounds)
    SWITCHES.update({span: READY, 2 * span: DONE, rounds - span: READY, rounds: DONE})
    return run_long(agent, kind, rounds, context)


def long_instructions(agent: str, kind: str, rounds: int, context: bool) -> tuple[float, float]:
    """Instructions per round early (rounds 50-100) and late (the last 50) in one run."""
    arguments = ["--child", agent, "--mode", "long-instructions", "--kind", kind]
    arguments += ["--rounds", str(rounds), *(["--context"] if context else [])]
    early, late = count_windows(arguments, agent)
    span = window(rounds)
    return early / span, late / span


def instruction_table(counts: dict[tuple[str, str, str], float], questions: int) -> str:
    """Millions of instructions per question: each agent on both faces and each saver,
    the async/sync ratio, and each face divided by ``create_agent``'s on the same face."""
    rows = [
        f"Instructions per question (callgrind, every thread; {questions} questions after "
        "a warm-up, each on a new thread), in millions.",
        "",
        "| saver | agent | sync | async | async/sync | sync ÷ create_agent | "
        f"async ÷ create_agent | sync ÷ {DEFAULTED} | async ÷ {DEFAULTED} |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in INSTRUCTION_SAVERS:
        for agent in INSTRUCTION_AGENTS:
            sync, run_async = counts[agent, kind, "sync"], counts[agent, kind, "async"]
            base_sync, base_async = counts[THEIRS, kind, "sync"], counts[THEIRS, kind, "async"]
            full_sync = counts[DEFAULTED, kind, "sync"]
            full_async = counts[DEFAULTED, kind, "async"]
            rows.append(
                markdown_row(
                    [
                        LABELS[kind],
                        agent,
                        f"{sync / 1e6:.2f}",
                        f"{run_async / 1e6:.2f}",
                        f"{run_async / sync:.2f}",
                        f"{sync / base_sync:.2f}",
                        f"{run_async / base_async:.2f}",
                        f"{sync / full_sync:.2f}",
                        f"{run_async / full_async:.2f}",
                    ]
                )
            )
    return "\n".join(rows)


LONG_INSTRUCTION_AGENTS = (
    ("react", False),
    ("react_text", False),
    ("react", True),
    (THEIRS, False),
)
"""Each agent with or without our context manager (:data:`CONTEXT_STRATEGY`): with it the
prompt stops growing, so what still grows per round is the orchestration's own."""
LONG_INSTRUCTION_SAVERS = ("memory", "sqlite")
INSTRUCTION_ROUNDS = 1000


def long_instruction_table(rounds: int) -> str:
    """Millions of instructions per round early and late in one long run of each agent on
    each saver, their ratio (growth), and each window divided by ``create_agent``'s."""
    span = window(rounds)
    rows = [
        f"Instructions per round in one {rounds}-round run (callgrind, every thread): "
        f"rounds {span + 1}-{2 * span} (early) and the last {span} (late), in millions.",
        "",
        "| saver | agent | early | late | late/early | early ÷ create_agent | "
        "late ÷ create_agent |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for kind in LONG_INSTRUCTION_SAVERS:
        counts = {}
        for agent, context in LONG_INSTRUCTION_AGENTS:
            name = f"{agent}, {CONTEXT_STRATEGY!r} context" if context else agent
            print(f"  callgrind: {name}, {kind}, {rounds} rounds", file=sys.stderr, flush=True)
            counts[name] = long_instructions(agent, kind, rounds, context)
        base_early, base_late = counts[THEIRS]
        for name, (early, late) in counts.items():
            cells = [f"{early / 1e6:.2f}", f"{late / 1e6:.2f}", f"{late / early:.2f}"]
            cells += [f"{early / base_early:.2f}", f"{late / base_late:.2f}"]
            rows.append(markdown_row([LABELS[kind], name, *cells]))
    return "\n".join(rows)


def run_instructions(questions: int) -> str:
    """The instruction table of every agent, saver and face (``--instructions``)."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("--instructions needs valgrind (Debian: apt-get install valgrind)")
    counts = {}
    for kind in INSTRUCTION_SAVERS:
        for face in FACES:
            for agent in INSTRUCTION_AGENTS:
                print(f"  callgrind: {agent}, {kind}, {face}", file=sys.stderr, flush=True)
                counts[agent, kind, face] = count_instructions(agent, kind, face, questions)
    return instruction_table(counts, questions)


def measure(
    agent: str, mode: str, kind: str, rounds: int, invocations: int, context: bool = False
) -> dict[str, Any]:
    """One measurement in a fresh process."""
    command = [sys.executable, __file__, "--child", agent, "--mode", mode, "--kind", kind]
    command += ["--rounds", str(rounds), "--invocations", str(invocations)]
    command += ["--context"] if context and agent != THEIRS else []
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{agent} ({mode}, {kind}, {rounds}) failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def mb(kb: float) -> str:
    return f"{kb / 1024:.0f}"


def paired(
    trials: list[dict[str, dict[str, Any]]], agent: str
) -> Iterator[tuple[int, dict[str, Any], dict[str, Any]]]:
    """Each trial's number with its run of ``agent`` and the create_agent run it is divided by."""
    for number, trial in enumerate(trials, 1):
        yield number, trial[agent], trial[THEIRS]


def markdown_row(cells: Sequence[str]) -> str:
    return "|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|"


def compared_rows(
    label: Sequence[str],
    pairs: Iterable[tuple[int, dict[str, Any], dict[str, Any]]],
    between: Callable[[dict[str, Any], dict[str, Any]], list[str]] = lambda mine, base: [],
    after: Callable[[dict[str, Any], dict[str, Any]], list[str]] = lambda mine, base: [],
) -> list[str]:
    """One row per trial — its number, ``label``, ms of both sides and their ratio,
    ``between``'s cells, peak RSS of both and their ratio, ``after``'s cells — then the
    medians of both ratios in bold."""
    rows, times, peaks = [], [], []
    middle = end = 0
    for number, mine, base in pairs:
        times.append(mine["ms"] / base["ms"])
        peaks.append(mine["peak_kb"] / base["peak_kb"])
        extra, last = between(mine, base), after(mine, base)
        middle, end = len(extra), len(last)
        rows.append(
            markdown_row(
                [
                    str(number),
                    *label,
                    f"{mine['ms']:.2f}",
                    f"{base['ms']:.2f}",
                    f"{times[-1]:.2f}",
                    *extra,
                    mb(mine["peak_kb"]),
                    mb(base["peak_kb"]),
                    f"{peaks[-1]:.2f}",
                    *last,
                ]
            )
        )
    medians = [f"**{statistics.median(times):.2f}**", f"**{statistics.median(peaks):.2f}**"]
    blank = [""] * middle
    rows.append(
        markdown_row(
            ["median", *label, "", "", medians[0], *blank, "", "", medians[1], *[""] * end]
        )
    )
    return rows


def short_table(trials: list[dict[str, dict[str, Any]]], ours: Sequence[str]) -> str:
    rows = [
        "| trial | ours | ms/question: ours | create_agent | ours/theirs | "
        "peak RSS MB: ours | create_agent | ours/theirs |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for agent in ours:
        rows += compared_rows([agent], paired(trials, agent))
    return "\n".join(rows)


def _growth(mine: dict[str, Any], base: dict[str, Any]) -> list[str]:
    """Early and late ms per round of both sides, with each side's late/early ratio."""
    cells = []
    for side in (mine, base):
        cells += [
            f"{side['early']:.2f} → {side['late']:.2f}",
            f"{side['late'] / side['early']:.2f}",
        ]
    return cells


def long_table(trials: list[dict[str, dict[str, Any]]], ours: Sequence[str], rounds: int) -> str:
    span = window(rounds)
    early = f"{span}-{2 * span}"
    rows = [
        f"| trial | ours | ms/round: ours | create_agent | ours/theirs | "
        f"ms/round, rounds {early} → last {span}: ours | late/early | create_agent | late/early | "
        f"peak RSS MB: ours | create_agent | ours/theirs | run growth MB: ours | create_agent |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for agent in ours:
        rows += compared_rows(
            [agent],
            paired(trials, agent),
            between=_growth,
            after=lambda mine, base: [mb(mine["growth_kb"]), mb(base["growth_kb"])],
        )
    return "\n".join(rows)


def run_setting(
    mode: str, kind: str, rounds: int, args: argparse.Namespace, context: bool = False
) -> list[dict[str, dict[str, Any]]]:
    order = [args.ours[0], THEIRS, *args.ours[1:], *(REFERENCES if mode == "short" else ())]
    trials = []
    for number in range(1, args.pairs + 1):
        trial = {}
        for agent in order:
            print(f"  {mode} {rounds} {kind} trial {number}: {agent}", file=sys.stderr, flush=True)
            trial[agent] = measure(agent, mode, kind, rounds, args.invocations, context)
        trials.append(trial)
    return trials


def shown_path(filename: str) -> str:
    for marker in ("site-packages/", "/src/", "/lib/python"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def waiting(filename: str, name: str) -> bool:
    """Thread plumbing, whose cumulative time is mostly a thread waiting for work or a result."""
    plumbing = filename.endswith("threading.py") or "concurrent/futures" in filename
    return plumbing or name == "_serve" or "acquire" in name or "SimpleQueue" in name


def profiled(work: Callable[[], Any], top: int) -> tuple[Any, float, int, list[str]]:
    """Run ``work`` under cProfile, every thread it starts with a profiler of its own.

    Model calls, tool calls and checkpoint writes run on worker threads, so the
    figures of all threads are merged; waiting for work or for another thread is
    left out. Returns the result, the seconds taken, the worker threads merged
    and the ``top`` functions by cumulative time as table rows.
    """
    profilers: list[cProfile.Profile] = []

    def start_thread_profiler(*_: Any) -> None:
        sys.setprofile(None)
        profilers.append(cProfile.Profile())
        profilers[-1].enable()

    main_thread = cProfile.Profile()
    threading.setprofile(start_thread_profiler)
    start = time.perf_counter()
    try:
        result = main_thread.runcall(work)
    finally:
        elapsed = time.perf_counter() - start
        threading.setprofile(None)  # type: ignore[arg-type]
    merged = pstats.Stats(main_thread)
    for profiler in profilers:
        merged.add(profiler)
    stats = merged.stats  # type: ignore[attr-defined]
    ranked = sorted(
        (item for item in stats.items() if not waiting(item[0][0], item[0][2])),
        key=lambda item: item[1][3],
        reverse=True,
    )[:top]
    rows = ["| function | where | calls | own s | cumulative s |", "|---|---|---:|---:|---:|"]
    for (filename, line, name), (_, calls, own, cumulative, _) in ranked:
        where = "built-in" if filename == "~" else f"{shown_path(filename)}:{line}"
        rows.append(f"| `{name}` | {where} | {calls:,} | {own:.2f} | {cumulative:.2f} |")
    return result, elapsed, len(profilers), rows


def profile(rounds: int, top: int = 25) -> str:
    """cProfile of one ``rounds``-round ``react`` run on a SqliteSaver, in this process."""
    with tempfile.TemporaryDirectory() as directory:
        model = ScriptModel(script=script("react", rounds))
        graph = build("react", model, open_saver("sqlite", directory))
        run = config(rounds, "profiled")
        result, elapsed, workers, rows = profiled(lambda: graph.invoke(QUESTION, run), top)
    check("react", result, rounds)
    heading = (
        f"{rounds} rounds, react, SqliteSaver, under cProfile: {elapsed:.1f} s "
        f"({elapsed * 1000 / rounds:.1f} ms/round); {workers} worker threads merged "
        "with the main one, thread plumbing and waits left out."
    )
    return "\n".join([heading, "", *rows])


def child(args: argparse.Namespace) -> None:
    if args.mode == "instructions":
        result = run_counted(args.child, args.kind, args.face, args.invocations)
    elif args.mode == "long-instructions":
        result = run_long_counted(args.child, args.kind, args.rounds[0], args.context)
    elif args.mode == "short":
        result = run_short(args.child, args.kind, args.invocations)
    else:
        result = run_long(args.child, args.kind, args.rounds[0], args.context)
    print(json.dumps({"agent": args.child, **result}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="trials per setting")
    parser.add_argument(
        "--rounds", type=int, nargs="*", default=[300], help="long-run lengths (none: short only)"
    )
    parser.add_argument("--checkpointers", nargs="+", choices=CHECKPOINTERS, default=CHECKPOINTERS)
    parser.add_argument("--ours", nargs="+", choices=OURS, default=list(OURS))
    parser.add_argument(
        "--invocations",
        type=int,
        default=None,
        help=f"short questions timed (100; --instructions: {INSTRUCTION_QUESTIONS})",
    )
    parser.add_argument("--no-short", action="store_true", help="long runs only")
    parser.add_argument("--quick", action="store_true", help="one trial, 100 rounds (~30 s)")
    parser.add_argument(
        "--context",
        action="store_true",
        help=f"also the long runs with our context manager on ({CONTEXT_STRATEGY!r})",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile one run of ours")
    parser.add_argument("--profile-rounds", type=int, default=300)
    parser.add_argument(
        "--child", choices=(*OURS, THEIRS, DEFAULTED, *REFERENCES), help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="only the instructions per short question, under callgrind (needs valgrind)",
    )
    parser.add_argument(
        "--instruction-rounds",
        type=int,
        default=INSTRUCTION_ROUNDS,
        help="with --instructions: the long run whose early and late rounds are counted (0: none)",
    )
    parser.add_argument(
        "--mode",
        choices=("short", "long", "instructions", "long-instructions"),
        help=argparse.SUPPRESS,
    )
    parser.add_argument("--face", choices=FACES, default="sync", help=argparse.SUPPRESS)
    parser.add_argument("--kind", choices=CHECKPOINTERS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.quick:
        args.pairs, args.rounds, args.invocations = 1, [100], 10
        args.checkpointers = ["none", "sqlite", "sqlite-async"]
        args.profile_rounds = 100
    print("# Orchestration overhead: ours vs create_agent\n", flush=True)
    if args.instructions:
        print(run_instructions(args.invocations or INSTRUCTION_QUESTIONS) + "\n", flush=True)
        if args.instruction_rounds:
            print(long_instruction_table(args.instruction_rounds), flush=True)
        return
    args.invocations = args.invocations or 100
    for kind in [] if args.no_short else args.checkpointers:
        trials = run_setting("short", kind, 1, args)
        print(f"## Short question (1 round), {LABELS[kind]}\n", flush=True)
        print(short_table(trials, [*args.ours, *REFERENCES]) + "\n", flush=True)
    for rounds in args.rounds:
        for kind in args.checkpointers:
            trials = run_setting("long", kind, rounds, args)
            print(f"## Long run: {rounds} rounds, {LABELS[kind]}\n", flush=True)
            print(long_table(trials, args.ours, rounds) + "\n", flush=True)
            if args.context:
                trials = run_setting("long", kind, rounds, args, context=True)
                heading = f"## Long run, ours with the context manager ({CONTEXT_STRATEGY!r})"
                print(f"{heading}: {rounds} rounds, {LABELS[kind]}\n", flush=True)
                print(long_table(trials, args.ours, rounds) + "\n", flush=True)
    if args.profile:
        print("## Profile: top 25 by cumulative time\n", flush=True)
        print(profile(args.profile_rounds))


if __name__ == "__main__":
    main()
