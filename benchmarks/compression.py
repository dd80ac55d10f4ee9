"""Context strategies: a long run's prompts and summary calls, and what each strategy keeps.

First a ReAct run of 100 rounds (``--rounds``) with a scripted model, once per
strategy: the estimated prompt tokens of every 10th model call, the largest
prompt, the tokens of all prompts together, and the summary calls made (a
summary is reused and folded into at most once per ``SUMMARY_EVERY`` rounds).

Then the same trajectories fitted once: a system prompt, a question and N steps
of one tool call with its result (a search hit, a file read, a calculation, some
in Chinese), with messages and estimated tokens before and after.

Summaries are scripted (a fixed short text), so the figures measure what each
strategy keeps, not a model's summarising. ``hybrid`` is shown with a window of
8,000 tokens (threshold 80%).

Run: python benchmarks/compression.py [--rounds 100] [--steps 20 50] [--keep 20] [--window 8000]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from reasoning_graphs.context import ContextStrategy, Limits
from reasoning_graphs.effects import drive
from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.nodes.model.call import summariser
from reasoning_graphs.nodes.model.setup import RunScope, agent_setup
from reasoning_graphs.nodes.model.tokens import estimate_tokens
from reasoning_graphs.nodes.model.window import SUMMARY_INSTRUCTIONS, fit_prompt
from reasoning_graphs.testing import RecordedCall, ScriptedChatModel, tool_call

SYSTEM = "You are a research agent. Use the tools, cite what they return, answer concisely."
QUESTION = "Compare the 2023 revenue of the three subsidiaries and say which grew fastest."
SUMMARY = (
    "Goal: compare 2023 revenue of three subsidiaries. Found: A 12.4M (+8%), B 9.1M (+15%); "
    "C not found yet in the reports read. Next: read the remaining filings for C."
)
RESULTS = (
    "Annual report, section 4: revenue by segment, headcount, offices and outlook. " * 12,
    "子公司年度报告：营业收入、员工人数、办公地点以及来年展望，均按季度列示。" * 10,
    "search: 10 hits. 1. Filing 2023-Q4 … 2. Press release … 3. Analyst note … " * 10,
)
STRATEGIES: tuple[ContextStrategy, ...] = ("none", "window", "summary", "protective", "hybrid")


@tool
def read(source: str) -> str:
    """Read one filing by its name."""
    number = int(source.rsplit("-", 1)[-1])
    return RESULTS[number % len(RESULTS)]


class Reader(ScriptedChatModel):
    """Reads filings 1..``rounds``, then answers; every summary request gets :data:`SUMMARY`."""

    rounds: int = 100

    def _choose_reply(self, record: RecordedCall) -> Any:
        if is_summary(record):
            return SUMMARY
        step = sum(not is_summary(call) for call in self.calls)
        return tool_call("read", source=f"filing-{step}") if step <= self.rounds else "C grew 3%."


def is_summary(call: RecordedCall) -> bool:
    return bool(call.messages) and call.messages[0].text == SUMMARY_INSTRUCTIONS


@dataclass(frozen=True)
class LongRun:
    """What one strategy sent over a long run: each step call's prompt, and the summaries."""

    prompts: list[int]
    summaries: int
    summary_tokens: int


def long_run(rounds: int, limits: Limits) -> LongRun:
    """A ReAct run of ``rounds`` tool rounds under ``limits``' context options."""
    model = Reader(rounds=rounds)
    options = {
        "context_strategy": limits.context_strategy,
        "context_window": limits.context_window,
        "keep_messages": limits.keep_messages,
    }
    graph = build_graph(
        model,
        tools=[read],
        system_prompt=SYSTEM,
        max_model_calls=None,
        max_tool_calls=None,
        **options,
    )
    graph.invoke({"messages": [HumanMessage(QUESTION)]}, {"recursion_limit": 10 * rounds + 50})
    summaries = [call for call in model.calls if is_summary(call)]
    return LongRun(
        prompts=[estimate_tokens(call.messages) for call in model.calls if not is_summary(call)],
        summaries=len(summaries),
        summary_tokens=sum(estimate_tokens(call.messages) for call in summaries),
    )


def long_run_table(rounds: int, limits: Limits, every: int = 10) -> str:
    """Prompt tokens per model call over a run of ``rounds``, for each strategy."""
    runs = {s: long_run(rounds, replace(limits, context_strategy=s)) for s in STRATEGIES}
    rows = [
        f"| model call | {' | '.join(STRATEGIES)} |",
        f"|---:|{'---:|' * len(STRATEGIES)}",
    ]
    calls = len(runs["none"].prompts)
    for call in sorted({1, *range(every, calls + 1, every), calls}):
        figures = " | ".join(f"{runs[s].prompts[call - 1]:,}" for s in STRATEGIES)
        rows.append(f"| {call} | {figures} |")
    for label, figure in (
        ("largest prompt", lambda run: max(run.prompts)),
        ("all prompts", lambda run: sum(run.prompts)),
        ("summary calls", lambda run: run.summaries),
        ("summary prompts' tokens", lambda run: run.summary_tokens),
    ):
        rows.append(f"| {label} | {' | '.join(f'{figure(runs[s]):,}' for s in STRATEGIES)} |")
    return "\n".join(rows)


def trajectory(steps: int) -> list[BaseMessage]:
    """A system prompt, the question and ``steps`` steps of one call and its result."""
    messages: list[BaseMessage] = [SystemMessage(SYSTEM), HumanMessage(QUESTION)]
    for number in range(1, steps + 1):
        call = {"name": "read", "args": {"source": f"filing-{number}"}, "id": f"c{number}"}
        messages.append(
            AIMessage(f"Step {number}: the next filing may list it.", tool_calls=[call])
        )
        messages.append(ToolMessage(RESULTS[number % len(RESULTS)], tool_call_id=f"c{number}"))
    return messages


def fitted(messages: list[BaseMessage], limits: Limits) -> list[BaseMessage]:
    """The prompt the model would receive under ``limits`` (the summary scripted)."""
    model = ScriptedChatModel(script=[SUMMARY], cycle=True)
    run = RunScope(agent_setup(model, []), limits)
    return drive(fit_prompt(messages, limits, summariser(run, None))).prompt


def table(step_counts: list[int], limits: Limits) -> str:
    rows = [
        "| steps | strategy | messages before | after | tokens before | after | saved |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for steps in step_counts:
        messages = trajectory(steps)
        before = estimate_tokens(messages)
        for strategy in STRATEGIES:
            after = fitted(messages, replace(limits, context_strategy=strategy))
            tokens = estimate_tokens(after)
            rows.append(
                f"| {steps} | {strategy} | {len(messages)} | {len(after)} | {before:,} | "
                f"{tokens:,} | {1 - tokens / before:.0%} |"
            )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100, help="tool rounds of the long run")
    parser.add_argument("--steps", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--keep", type=int, default=20, help="messages the window keeps")
    parser.add_argument("--window", type=int, default=8000, help="context window for hybrid")
    args = parser.parse_args()
    limits = Limits(keep_messages=args.keep, context_window=args.window)
    print(f"A run of {args.rounds} tool rounds: estimated prompt tokens by model call\n")
    print(long_run_table(args.rounds, limits))
    print(f"\nTrajectories of {', '.join(map(str, args.steps))} steps, fitted once\n")
    print(table(args.steps, limits))


if __name__ == "__main__":
    main()
