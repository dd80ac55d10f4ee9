"""``think``: one model call that either answers or proposes tool calls."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import AIMessage, SystemMessage

from reasoning_graphs.nodes.setup import AgentSetup
from reasoning_graphs.nodes.trajectory import thought_event


def wants_tools(message: AIMessage) -> bool:
    """The reply proposes tool calls (well-formed or not) rather than answering."""
    return bool(message.tool_calls or message.invalid_tool_calls)


def make_think(setup: AgentSetup) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    """Build the ``think`` node for ``setup``."""

    async def think(state: dict[str, Any]) -> dict[str, Any]:
        run = setup.for_run()
        prompt = [SystemMessage(setup.system_prompt), *state["messages"]]
        started = time.perf_counter()
        reply = await run.model_with_tools(state).ainvoke(prompt)
        latency_ms = (time.perf_counter() - started) * 1000
        event = thought_event(state, reply=reply, prompt=prompt, latency_ms=latency_ms)
        outcome = None if wants_tools(reply) else {"status": "answered"}
        return {"messages": [reply], "trajectory": [event], "outcome": outcome, "pending": []}

    return think
