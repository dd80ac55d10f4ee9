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

from reasoning_graphs.graphs.plan_execute import build_graph
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers.crash_harness import (
    command_line,
    logging_tool,
    open_checkpointer,
    report,
    thread_config,
)

THREAD = thread_config("plan-execute")
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


def main() -> None:
    db, log, rest = command_line()
    resuming = rest == ["resume"]
    saver = open_checkpointer(db)
    model = ScriptedChatModel(script=SCRIPT[RESUMED_AT:] if resuming else SCRIPT)
    tools = [
        logging_tool(log, "first", slow=False, timeout=None),
        logging_tool(log, "second", slow=True, timeout=None),
    ]
    graph = build_graph(model, tools=tools, checkpointer=saver)
    payload = None if resuming else {"messages": [("user", "go")]}
    # as the CLI does: each checkpoint is stored before the next step starts, so a
    # kill cannot lose the step-2 run's checkpoints while its tool is running
    state = graph.invoke(payload, THREAD, durability="sync")
    report(
        {
            "last": state["messages"][-1].content,
            "outcome": state["outcome"],
            "steps": [done["step"] for done in state["past_steps"]],
        }
    )


if __name__ == "__main__":
    main()
