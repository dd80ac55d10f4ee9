"""A ReWOO agent on a SQLite checkpointer, driven from a separate process by test_rewoo.py.

Usage: python rewoo_agent.py DB LOG [resume]

The plan has two steps: ``#E1 = first[a]`` (fast) and ``#E2 = second[#E1]``,
which sleeps for two minutes unless ``SLOW=0``, so a test can kill the
process while ``#E2`` runs after ``#E1`` was saved. With ``resume`` the
crashed run of ``$THREAD_ID`` is resumed instead of started. Each tool
appends a line to LOG when it finishes; the slow one also when it starts.
"""

from __future__ import annotations

from reasoning_graphs.graphs.rewoo import build_graph
from reasoning_graphs.testing import ScriptedChatModel
from tests.helpers.crash_harness import (
    command_line,
    logging_tool,
    open_checkpointer,
    report,
    thread_config,
)

THREAD = thread_config("rewoo-durable")
PLAN = {
    "steps": [
        {"var": "E1", "tool": "first", "args": {"item": "a"}, "reason": "fast step"},
        {"var": "E2", "tool": "second", "args": {"item": "#E1"}, "reason": "slow step"},
    ]
}


def main() -> None:
    db, log, rest = command_line()
    resuming = rest == ["resume"]
    saver = open_checkpointer(db)
    tools = [logging_tool(log, "first", slow=False), logging_tool(log, "second", slow=True)]
    # when resuming, the plan is already in the checkpoint: only the solver is left
    model = ScriptedChatModel(script=["all done"] if resuming else [PLAN, "all done"])
    graph = build_graph(model, tools=tools, checkpointer=saver)
    state = graph.invoke(None if resuming else {"messages": [("user", "go")]}, THREAD)
    report({"last": state["messages"][-1].content, "model_calls": len(model.calls)})


if __name__ == "__main__":
    main()
