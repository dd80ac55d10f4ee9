"""Context strategies on the same trajectories: messages and estimated tokens before and after.

Each trajectory is a system prompt, a question and N steps of one tool call
with its result (a search hit, a file read, a calculation, some in Chinese).
Each strategy fits the prompt as the model-call seam would before a call; the
summary is scripted (a fixed short text), so the figures measure what each
strategy keeps, not a model's summarising. ``hybrid`` is shown with a window
of 8,000 tokens (threshold 80%).

Run: python benchmarks/compression.py [--steps 20 50] [--keep 20] [--window 8000]
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from reasoning_graphs.context import ContextStrategy, Limits
from reasoning_graphs.effects import drive
from reasoning_graphs.nodes.context_window import fit_prompt
from reasoning_graphs.nodes.model_call import summariser
from reasoning_graphs.nodes.setup import RunScope, agent_setup
from reasoning_graphs.nodes.tokens import estimate_tokens
from reasoning_graphs.testing import ScriptedChatModel

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
    parser.add_argument("--steps", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--keep", type=int, default=20, help="messages the window keeps")
    parser.add_argument("--window", type=int, default=8000, help="context window for hybrid")
    args = parser.parse_args()
    print(table(args.steps, Limits(keep_messages=args.keep, context_window=args.window)))


if __name__ == "__main__":
    main()
