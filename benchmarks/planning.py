"""Planning patterns on the same tasks: model calls, tokens and wall time.

The model is scripted (a fixed reply per call) and sleeps a fixed time per
call and per output token; each tool sleeps a fixed time. So the figures
measure what the patterns themselves cost — how many model calls they make,
how big their prompts grow, and how much tool time they overlap — not any
model's quality.

ReAct here takes one action per model turn, as in the original paper
(Yao et al., 2023): it is the sequential baseline the planning papers compare
against (ReWOO: Xu et al., 2023; LLM Compiler: Kim et al., 2023).

Run: python benchmarks/planning.py [--call-delay 0.1] [--token-delay 0.001] [--tool-delay 1.0]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import HumanMessage

from reasoning_graphs.graphs import graph_builder
from reasoning_graphs.graphs.llm_compiler.dag import TaskPlan, TaskSchema
from reasoning_graphs.graphs.llm_compiler.join import JoinDecision
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

HEIGHTS = {"Alder Tower": "312 m", "Birch Spire": "298 m", "Cedar Point": "334 m"}
CHAIN = {"Ada": "Grace", "Grace": "Edsger", "Edsger": "Barbara", "Barbara": "Donald"}


@dataclass(frozen=True)
class Task:
    """A question, its tools, and what each pattern's model says, call by call."""

    name: str
    question: str
    tools: Callable[[float], list[ToolSpec]]
    scripts: dict[str, list[Any]]
    tool_chain: int
    """How many tool calls lie on the longest dependency chain."""


def lookup_tools(seconds: float) -> list[ToolSpec]:
    def height(building: str) -> str:
        """Look up a building's height."""
        time.sleep(seconds)
        return f"{building} is {HEIGHTS[building]} tall."

    return [tool_spec(height, concurrency_safe=True)]


def chain_tools(seconds: float) -> list[ToolSpec]:
    def mentor(person: str) -> str:
        """Look up who mentored a person."""
        time.sleep(seconds)
        return CHAIN[person]

    return [tool_spec(mentor, concurrency_safe=True)]


def rewoo_plan(steps: list[tuple[str, str, dict[str, str]]]) -> dict[str, Any]:
    return {
        "steps": [
            {"var": var, "tool": tool, "args": args, "reason": "needed for the answer"}
            for var, tool, args in steps
        ]
    }


def compiler_plan(tasks: list[tuple[int, str, dict[str, str], list[int]]]) -> TaskPlan:
    return TaskPlan(
        tasks=[TaskSchema(id=i, tool=tool, args=args, deps=deps) for i, tool, args, deps in tasks]
    )


COMPARISON = Task(
    name="(a) three lookups + comparison",
    question="Which is tallest: Alder Tower, Birch Spire or Cedar Point?",
    tools=lookup_tools,
    tool_chain=1,
    scripts={
        "react": [
            *[tool_call("height", building=b) for b in HEIGHTS],
            "Cedar Point is the tallest at 334 m.",
        ],
        "rewoo": [
            rewoo_plan([(f"E{i}", "height", {"building": b}) for i, b in enumerate(HEIGHTS, 1)]),
            "Cedar Point is the tallest at 334 m.",
        ],
        "llm_compiler": [
            compiler_plan([(i, "height", {"building": b}, []) for i, b in enumerate(HEIGHTS, 1)]),
            JoinDecision(answer="Cedar Point is the tallest at 334 m."),
        ],
        "plan_execute": [
            Plan(steps=[f"Look up the height of {b}." for b in HEIGHTS]),
            *[
                reply
                for b in HEIGHTS
                for reply in (tool_call("height", building=b), f"{b} is {HEIGHTS[b]} tall.")
            ],
            Replan(response="Cedar Point is the tallest at 334 m."),
        ],
    },
)

FOUR_HOPS = Task(
    name="(b) four-hop chain",
    question="Who mentored the mentor of the mentor of Ada's mentor?",
    tools=chain_tools,
    tool_chain=4,
    scripts={
        "react": [
            *[tool_call("mentor", person=p) for p in CHAIN],
            "Donald.",
        ],
        "rewoo": [
            rewoo_plan(
                [("E1", "mentor", {"person": "Ada"})]
                + [(f"E{i}", "mentor", {"person": f"#E{i - 1}"}) for i in range(2, 5)]
            ),
            "Donald.",
        ],
        "llm_compiler": [
            compiler_plan(
                [(1, "mentor", {"person": "Ada"}, [])]
                + [(i, "mentor", {"person": f"${i - 1}"}, [i - 1]) for i in range(2, 5)]
            ),
            JoinDecision(answer="Donald."),
        ],
        "plan_execute": [
            Plan(steps=[f"Find the mentor of the person found in step {i}." for i in range(4)]),
            *[
                reply
                for person, mentor in CHAIN.items()
                for reply in (tool_call("mentor", person=person), mentor)
            ],
            Replan(response="Donald."),
        ],
    },
)


@dataclass(frozen=True)
class Measurement:
    pattern: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    wall: float
    model_time: float
    answer: str

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def measure(task: Task, pattern: str, args: argparse.Namespace) -> Measurement:
    model = ScriptedChatModel(
        script=task.scripts[pattern], delay=args.call_delay, token_delay=args.token_delay
    )
    graph = graph_builder(pattern)(model, tools=task.tools(args.tool_delay), max_steps=20)
    started = time.perf_counter()
    state = graph.invoke({"messages": [HumanMessage(task.question)]})
    wall = time.perf_counter() - started
    usage = [call.usage or {} for call in model.calls]
    completion = sum(u.get("output_tokens", 0) for u in usage)
    return Measurement(
        pattern=pattern,
        calls=len(model.calls),
        prompt_tokens=sum(u.get("input_tokens", 0) for u in usage),
        completion_tokens=completion,
        wall=wall,
        model_time=len(model.calls) * args.call_delay + completion * args.token_delay,
        answer=state["messages"][-1].text[:40],
    )


def report(task: Task, rows: list[Measurement], args: argparse.Namespace) -> None:
    print(f"\n{task.name}: {task.question}")
    print("| pattern | model calls | prompt tokens | completion tokens | wall (s) | answer |")
    print("|---|---:|---:|---:|---:|---|")
    for row in rows:
        print(
            f"| {row.pattern} | {row.calls} | {row.prompt_tokens} | {row.completion_tokens} "
            f"| {row.wall:.2f} | {row.answer} |"
        )
    by_name = {row.pattern: row for row in rows}
    react, rewoo = by_name["react"], by_name["rewoo"]
    print(
        f"ReWOO tokens vs ReAct: {rewoo.tokens} / {react.tokens} = "
        f"{rewoo.tokens / react.tokens:.2f}"
    )
    for row in rows:
        if row.pattern in ("rewoo", "llm_compiler"):
            critical = row.model_time + task.tool_chain * args.tool_delay
            print(
                f"{row.pattern}: wall {row.wall:.2f} s vs its critical path {critical:.2f} s "
                f"({row.wall / critical:.2f}x); ReAct is {react.wall / row.wall:.2f}x slower"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--call-delay", type=float, default=0.1, help="seconds per model call")
    parser.add_argument("--token-delay", type=float, default=0.001, help="seconds per output token")
    parser.add_argument("--tool-delay", type=float, default=1.0, help="seconds per tool call")
    args = parser.parse_args()
    print(
        f"scripted model: {args.call_delay} s per call + {args.token_delay} s per output token; "
        f"tools: {args.tool_delay} s per call"
    )
    for task in (COMPARISON, FOUR_HOPS):
        rows = [measure(task, pattern, args) for pattern in task.scripts]
        report(task, rows, args)


if __name__ == "__main__":
    main()
