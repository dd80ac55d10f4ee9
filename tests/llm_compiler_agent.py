"""An LLM Compiler agent on a SQLite checkpointer, driven from another process by
test_llm_compiler.py.

Usage: python llm_compiler_agent.py DB LOG [resume]

The plan has two tasks: ``1. first(a)`` (fast) and ``2. second($1)``, which
sleeps for two minutes unless ``SLOW=0``, so a test can kill the process
while task 2 runs after task 1's result was saved. With ``resume`` the
crashed run of ``$THREAD_ID`` is resumed instead of started. Each tool
appends a line to LOG when it finishes; the slow one also when it starts.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from reasoning_graphs.graphs.llm_compiler import build_graph
from reasoning_graphs.testing import ScriptedChatModel
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

THREAD = {"configurable": {"thread_id": os.environ.get("THREAD_ID", "compiler-durable")}}
PLAN = {
    "tasks": [
        {"id": 1, "tool": "first", "args": {"item": "a"}},
        {"id": 2, "tool": "second", "args": {"item": "$1"}},
    ]
}


def make_tool(log: Path, name: str, *, slow: bool) -> ToolSpec:
    def run(item: str) -> str:
        if slow and os.environ.get("SLOW", "1") == "1":
            with log.open("a") as out:
                out.write(f"start {name}\n")
            time.sleep(120)
        with log.open("a") as out:
            out.write(f"done {name} {item}\n")
        return f"{name} done with {item}"

    run.__name__ = name
    run.__doc__ = f"Test tool {name}."
    return tool_spec(run)


def main() -> None:
    db, log = sys.argv[1], Path(sys.argv[2])
    resuming = sys.argv[3:] == ["resume"]
    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    tools = [make_tool(log, "first", slow=False), make_tool(log, "second", slow=True)]
    # when resuming, the plan is already in the checkpoint: only the joiner is left
    model = ScriptedChatModel(script=["all done"] if resuming else [PLAN, "all done"])
    graph = build_graph(model, tools=tools, checkpointer=saver)
    payload = None if resuming else {"messages": [("user", "go")]}
    state = graph.invoke(payload, THREAD, durability="sync")
    print(json.dumps({"last": state["messages"][-1].content, "model_calls": len(model.calls)}))


if __name__ == "__main__":
    main()
