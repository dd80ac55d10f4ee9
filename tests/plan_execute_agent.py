"""A Plan-and-Execute agent on a SQLite checkpointer, driven from another process.

Usage: python plan_execute_agent.py DB LOG [resume]

The plan has two steps; each step's ReAct run calls one stateful tool
(``first``, then ``second``) and reports. ``second`` is slow unless SLOW=0, so
test_plan_execute.py can kill the process while it runs. With ``resume`` the
crashed thread is resumed, and the script holds only the model replies that a
run resuming at step 2's tool still needs: any finished work that ran again
would exhaust it or log a second ``done`` line. The thread id comes from
``$THREAD_ID``. Each tool appends a line to LOG when it finishes; the slow one
also when it starts.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from reasoning_graphs.graphs.plan_execute import build_graph
from reasoning_graphs.nodes.plan import Plan, Replan
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

THREAD = {"configurable": {"thread_id": os.environ.get("THREAD_ID", "plan-execute")}}
SCRIPT = [
    Plan(steps=["Run first.", "Run second."]),
    tool_call("first", item="first", id="id-first"),
    "first finished",
    tool_call("second", item="second", id="id-second"),
    "second finished",
    Replan(response="all done"),
]
RESUMED_AT = 4
"""Index of the first reply a run resumed inside step 2's tool call needs."""


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
    return tool_spec(run, timeout=None)


def main() -> None:
    db, log = sys.argv[1], Path(sys.argv[2])
    resuming = sys.argv[3:] == ["resume"]
    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    model = ScriptedChatModel(script=SCRIPT[RESUMED_AT:] if resuming else SCRIPT)
    tools = [make_tool(log, "first", slow=False), make_tool(log, "second", slow=True)]
    graph = build_graph(model, tools=tools, checkpointer=saver)
    payload = None if resuming else {"messages": [("user", "go")]}
    # as the CLI does: each checkpoint is stored before the next step starts, so a
    # kill cannot lose the step-2 run's checkpoints while its tool is running
    state = graph.invoke(payload, THREAD, durability="sync")
    print(
        json.dumps(
            {
                "last": state["messages"][-1].content,
                "outcome": state["outcome"],
                "steps": [done["step"] for done in state["past_steps"]],
            }
        )
    )


if __name__ == "__main__":
    main()
