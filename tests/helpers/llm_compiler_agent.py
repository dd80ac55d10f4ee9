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

from reasoning_graphs.graphs.llm_compiler import build_graph
from reasoning_graphs.testing import ScriptedChatModel
from tests.helpers.crash_harness import (
    command_line,
    logging_tool,
    open_checkpointer,
    report,
    thread_config,
)

THREAD = thread_config("compiler-durable")
PLAN = {
    "tasks": [
        {"id": 1, "tool": "first", "args": {"item": "a"}},
        {"id": 2, "tool": "second", "args": {"item": "$1"}},
    ]
}


def main() -> None:
    db, log, rest = command_line()
    resuming = rest == ["resume"]
    saver = open_checkpointer(db)
    tools = [logging_tool(log, "first", slow=False), logging_tool(log, "second", slow=True)]
    # when resuming, the plan is already in the checkpoint: only the joiner is left
    model = ScriptedChatModel(script=["all done"] if resuming else [PLAN, "all done"])
    graph = build_graph(model, tools=tools, checkpointer=saver)
    payload = None if resuming else {"messages": [("user", "go")]}
    state = graph.invoke(payload, THREAD, durability="sync")
    report({"last": state["messages"][-1].content, "model_calls": len(model.calls)})


if __name__ == "__main__":
    main()
