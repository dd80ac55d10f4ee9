"""A ReAct agent on a durable checkpointer, driven from a separate process by test_durability.py.

Usage: python durable_agent.py DB LOG MODE [RESUME_JSON]

DB is a SQLite file path or a ``postgresql://`` connection string; the thread
id comes from ``$THREAD_ID`` (default ``durable``) and the pattern from
``$PATTERN`` (``react`` or ``react_text``, whose model writes the same steps as text).

MODE is ``approval`` (one dangerous call needing a decision), ``parallel``
(three read-only calls in one turn, two of them slow unless SLOW=0) or
``ordered`` (three stateful calls in one turn, the last two slow unless
SLOW=0). With RESUME_JSON the thread is resumed (``null`` resumes a crashed
run) instead of started. Each tool appends a line to LOG when it finishes; a
slow tool also appends a line when it starts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.types import Command

from reasoning_graphs.graphs import graph_builder
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from tests.helpers.crash_harness import (
    command_line,
    logging_tool,
    open_checkpointer,
    report,
    thread_config,
)

THREAD = thread_config("durable")


def scenario(mode: str, log: Path):
    if mode == "approval":
        tools = [logging_tool(log, "deploy", slow=False, concurrency_safe=False, dangerous=True)]
        return tools, [tool_call("deploy", item="prod", id="d1"), "deployed"]
    names = ["first", "second", "third"]
    safe = mode == "parallel"
    tools = [
        logging_tool(log, name, slow=name != "first", concurrency_safe=safe, dangerous=False)
        for name in names
    ]
    turn = tool_calls(*[(name, {"item": name}, f"id-{name}") for name in names])
    return tools, [turn, "all done"]


def as_text(reply: Any) -> Any:
    """The same step written in the text ReAct format."""
    if not isinstance(reply, AIMessage):
        return f"Final Answer: {reply}"
    (call,) = reply.tool_calls
    return f"Thought: go\nAction: {call['name']}\nAction Input: {json.dumps(call['args'])}"


def main() -> None:
    db, log, rest = command_line()
    mode = rest[0]
    tools, script = scenario(mode, log)
    pattern = os.environ.get("PATTERN", "react")
    if pattern == "react_text":
        script = [as_text(reply) for reply in script]
    build_graph = graph_builder(pattern)
    saver = open_checkpointer(db)
    resuming = len(rest) > 1
    # when resuming, the model's first turn is already in the checkpoint
    model = ScriptedChatModel(script=script[1:] if resuming else script)
    graph = build_graph(model, tools=tools, checkpointer=saver)
    if resuming:
        resume = json.loads(rest[1])
        state = graph.invoke(None if resume is None else Command(resume=resume), THREAD)
    else:
        state = graph.invoke({"messages": [("user", "go")]}, THREAD)
    interrupts = [i.value for i in state.get("__interrupt__", [])]
    report({"interrupts": interrupts, "last": state["messages"][-1].content})


if __name__ == "__main__":
    main()
