"""Orchestration cost: our ReWOO graph against its own scripted baseline, same model and tool.

Both sides get the same scripted model (no latency; it keeps only its last
prompt) and the same trivial ``echo`` tool, so every millisecond measured is
the graph's own bookkeeping. The script is one plan of N ``echo`` steps, given
as a structured-output reply (``{"steps": [{"var": "E1", "tool": "echo",
"args": ..., "reason": ...}]}``), each step but the first extending the
previous result (``#E{n-1} > step n``) so that the steps run in order, then a
fixed text answer. The baseline, written in this file, is a minimal ReWOO in
plain LangGraph: ``plan`` asks the model once and reads the plan, ``tool``
runs one step per super-step with its ``#E`` references filled in until all
ran, and ``solve`` asks the model once. Ours is
``reasoning_graphs.graphs.rewoo.build_graph`` with ``max_model_calls=None`` and the
other options at their defaults (approvals, budgets, loop guards, tool
timeout, grounding report). Every question is checked: the tool ran N times,
its last call got the whole chain, and the last message is the scripted
answer; a broken run stops the benchmark instead of being timed.

Every measurement runs in its own fresh process, interleaved: in each trial
ours, then the baseline, and ours is divided by the baseline of the same
trial. Measured: ms per question, averaged over ``--invocations`` questions
after a warm-up question, each on a new thread; and the peak RSS of the
process. Checkpointers: none, and LangGraph's ``SqliteSaver`` on a temp file,
the same class for both sides. ``--profile ours|baseline`` prints a cProfile
of one side instead (all threads merged).

Measured with ``--pairs 3 --steps 1 20`` on two cores, medians of ours over
the baseline: with a 1-step plan 2.79x without a checkpointer (8-10 against
3-4 ms) and 1.57x on SQLite (13-17 against 7-13 ms); with 20 steps 3.76x
(43-51 against 13-14 ms) and 2.84x (98-107 against 31-42 ms). Peak RSS is
96-100 against 79-82 MB (1.22x), the weight of the library's imports, not of
the run. A wave whose calls need nothing settled goes from ``work`` straight
to ``act`` (two steps per wave, against the baseline's one), what ``work``
needs of the question so far is a running fold instead of a scan, and the
planner's model binding is kept between calls. What remains is per-step work
the baseline does not do at all: budgets, loop guards, approval triage, the
grounding report and the tool timeout's worker-thread hand-off.

Run: python benchmarks/planning_overhead.py [--pairs 3] [--steps 1 20] [--checkpointers none sqlite]
     [--invocations 10] [--quick] [--profile ours|baseline] [--profile-steps 20]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from typing import Annotated, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langchain_core.tools import BaseTool, tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from overhead import ScriptModel, compared_rows, open_saver, peak_kb, profiled
from pydantic import BaseModel
from typing_extensions import TypedDict

AGENTS = ("ours", "baseline")
CHECKPOINTERS = ("none", "sqlite")
LABELS = {"none": "no checkpointer", "sqlite": "SqliteSaver (file)"}
QUESTION = {"messages": [("user", "Echo each step of the chain, then say done.")]}
ANSWER = "done"
OUTPUTS: list[str] = []
"""What each call of the tool returned, in order."""


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    OUTPUTS.append(text)
    return text


def chain(steps: int) -> str:
    """What the last step of an N-step plan returns: every step's text, in order."""
    return " > ".join(f"step {n}" for n in range(1, steps + 1))


def plan_reply(steps: int) -> dict[str, Any]:
    """The scripted plan: N ``echo`` steps, each but the first extending the previous result."""
    return {
        "steps": [
            {
                "var": f"E{n}",
                "tool": "echo",
                "args": {"text": "step 1" if n == 1 else f"#E{n - 1} > step {n}"},
                "reason": f"Step {n} of the chain.",
            }
            for n in range(1, steps + 1)
        ]
    }


# The baseline: a minimal ReWOO in plain LangGraph (plan once, one tool step per
# super-step with #E references filled in, solve once).


class BaselineStep(BaseModel):
    """One tool call of the plan."""

    var: str
    tool: str
    args: dict[str, Any]
    reason: str


class BaselinePlan(BaseModel):
    """Every tool call the question needs, in order."""

    steps: list[BaselineStep]


class BaselineState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    steps: list[dict[str, Any]]
    results: dict[str, str]


REFERENCE = re.compile(r"#(E\d+)")
PLANNER = "Plan every tool call first. Name results E1, E2, ...; #E1 in an argument is E1's result."
SOLVER = "Answer the question from the plan's evidence below."


def fill_in(args: dict[str, Any], results: dict[str, str]) -> dict[str, Any]:
    """``args`` with each ``#E<n>`` in a text replaced by the result of step ``E<n>``."""
    filled = dict(args)
    for name, value in args.items():
        if isinstance(value, str):
            filled[name] = REFERENCE.sub(lambda match: results[match.group(1)], value)
    return filled


def build_baseline(model: BaseChatModel, tools: list[BaseTool], saver: Any) -> Any:
    """The scripted baseline: ``plan`` → ``tool`` (once per step) → ``solve``."""
    by_name = {t.name: t for t in tools}
    planner = model.with_structured_output(BaselinePlan)

    def plan(state: BaselineState) -> dict[str, Any]:
        reply = planner.invoke([SystemMessage(PLANNER), *state["messages"]])
        return {"steps": [step.model_dump() for step in reply.steps], "results": {}}

    def run_step(state: BaselineState) -> dict[str, Any]:
        results = state["results"]
        step = state["steps"][len(results)]
        output = by_name[step["tool"]].invoke(fill_in(step["args"], results))
        return {"results": {**results, step["var"]: str(output)}}

    def next_node(state: BaselineState) -> str:
        return "tool" if len(state["results"]) < len(state["steps"]) else "solve"

    def solve(state: BaselineState) -> dict[str, Any]:
        evidence = "\n".join(
            f"#{step['var']} = {step['tool']}{step['args']}: {state['results'][step['var']]}"
            for step in state["steps"]
        )
        reply = model.invoke([SystemMessage(SOLVER), *state["messages"], HumanMessage(evidence)])
        return {"messages": [reply]}

    graph = StateGraph(BaselineState)
    graph.add_node("plan", plan)
    graph.add_node("tool", run_step)
    graph.add_node("solve", solve)
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", next_node, ["tool", "solve"])
    graph.add_conditional_edges("tool", next_node, ["tool", "solve"])
    graph.add_edge("solve", END)
    return graph.compile(checkpointer=saver)


def build(agent: str, model: ScriptModel, saver: Any) -> Any:
    """The graph under test; ours gets no model-call budget, so nothing stops the plan."""
    if agent == "ours":
        from reasoning_graphs.graphs.rewoo import build_graph

        return build_graph(model, [echo], checkpointer=saver, max_model_calls=None)
    return build_baseline(model, [echo], saver)


def config(steps: int, thread: str) -> dict[str, Any]:
    return {"recursion_limit": 10 * steps + 100, "configurable": {"thread_id": thread}}


def check(agent: str, result: dict[str, Any], outputs: list[str], steps: int) -> None:
    """The question ran ``steps`` tool calls, in order, and ended on the scripted answer."""
    last = result["messages"][-1].content
    if len(outputs) != steps or outputs[-1] != chain(steps) or last != ANSWER:
        raise SystemExit(
            f"{agent}: {len(outputs)} tool calls (wanted {steps}), last result "
            f"{outputs[-1] if outputs else None!r}, last message {last!r}"
        )


def ask(agent: str, graph: Any, steps: int, thread: str) -> None:
    """One checked question."""
    before = len(OUTPUTS)
    result = graph.invoke(QUESTION, config(steps, thread))
    check(agent, result, OUTPUTS[before:], steps)


def run(agent: str, kind: str, steps: int, invocations: int) -> dict[str, Any]:
    """ms per question over ``invocations`` questions after a warm-up, each on a new thread."""
    with tempfile.TemporaryDirectory() as directory:
        model = ScriptModel(script=[plan_reply(steps), ANSWER], cycle=True)
        graph = build(agent, model, open_saver(kind, directory))
        ask(agent, graph, steps, "warm-up")
        results, marks = [], []
        start = time.perf_counter()
        for number in range(invocations):
            marks.append(len(OUTPUTS))
            results.append(graph.invoke(QUESTION, config(steps, f"question-{number}")))
        elapsed = time.perf_counter() - start
        for result, begin, end in zip(results, marks, [*marks[1:], len(OUTPUTS)], strict=True):
            check(agent, result, OUTPUTS[begin:end], steps)
        return {"ms": elapsed * 1000 / invocations, "peak_kb": peak_kb()}


def measure(agent: str, kind: str, steps: int, invocations: int) -> dict[str, Any]:
    """One measurement in a fresh process."""
    command = [sys.executable, __file__, "--child", agent, "--kind", kind]
    command += ["--steps", str(steps), "--invocations", str(invocations)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{agent} ({kind}, {steps} steps) failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def table(trials: list[dict[str, dict[str, Any]]]) -> str:
    rows = [
        "| trial | ms/question: ours | baseline | ours/baseline | "
        "peak RSS MB: ours | baseline | ours/baseline |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    pairs = ((number, trial["ours"], trial["baseline"]) for number, trial in enumerate(trials, 1))
    rows += compared_rows([], pairs)
    return "\n".join(rows)


def profile(agent: str, kind: str, steps: int, invocations: int, top: int = 20) -> str:
    """cProfile of ``invocations`` questions of ``agent`` in this process, every thread
    merged (see :func:`overhead.profiled`)."""

    def questions() -> None:
        for number in range(invocations):
            ask(agent, graph, steps, f"profiled-{number}")

    with tempfile.TemporaryDirectory() as directory:
        model = ScriptModel(script=[plan_reply(steps), ANSWER], cycle=True)
        graph = build(agent, model, open_saver(kind, directory))
        ask(agent, graph, steps, "warm-up")
        _, elapsed, workers, rows = profiled(questions, top)
    heading = (
        f"{agent}, {steps} steps, {LABELS[kind]}, {invocations} questions under cProfile: "
        f"{elapsed * 1000 / invocations:.1f} ms/question; {workers} worker threads merged, "
        "thread plumbing and waits left out."
    )
    return "\n".join([heading, "", *rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="trials per setting")
    parser.add_argument("--steps", type=int, nargs="+", default=[1, 20], help="plan lengths")
    parser.add_argument("--checkpointers", nargs="+", choices=CHECKPOINTERS, default=CHECKPOINTERS)
    parser.add_argument("--invocations", type=int, default=10, help="questions timed per run")
    parser.add_argument("--quick", action="store_true", help="one trial, 5 steps, 5 questions")
    parser.add_argument("--profile", choices=AGENTS, help="cProfile one side, in this process")
    parser.add_argument("--profile-steps", type=int, default=20)
    parser.add_argument("--profile-checkpointer", choices=CHECKPOINTERS, default="sqlite")
    parser.add_argument("--child", choices=AGENTS, help=argparse.SUPPRESS)
    parser.add_argument("--kind", choices=CHECKPOINTERS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = run(args.child, args.kind, args.steps[0], args.invocations)
        print(json.dumps({"agent": args.child, **result}))
        return
    if args.quick:
        args.pairs, args.steps, args.invocations = 1, [5], 5
    if args.profile:
        kind, steps = args.profile_checkpointer, args.profile_steps
        print(profile(args.profile, kind, steps, args.invocations))
        return
    print("# Orchestration overhead: our ReWOO vs a plain-LangGraph ReWOO\n", flush=True)
    for steps in args.steps:
        for kind in args.checkpointers:
            trials = []
            for number in range(1, args.pairs + 1):
                trial = {}
                for agent in AGENTS:
                    print(f"  {steps} steps {kind} trial {number}: {agent}", file=sys.stderr)
                    trial[agent] = measure(agent, kind, steps, args.invocations)
                trials.append(trial)
            print(f"## Plan of {steps} step(s), {LABELS[kind]}\n", flush=True)
            print(table(trials) + "\n", flush=True)


if __name__ == "__main__":
    main()
