"""A ReAct agent with a dangerous ``deploy``, driven as a process of its own by test_thread_lock.py.

Usage: python thread_lock_agent.py DB LOG ask|resume THREAD…

``ask`` asks on each THREAD for a deploy of that thread, which stops at its
approval; ``resume`` approves them, one thread after another. ``deploy``
appends a line ``deploy THREAD PID`` to LOG, then takes ``$DEPLOY_SECONDS``
(default 0.5) to finish.

With ``BARRIER=1``, ``resume`` prints ``ready`` once everything is loaded and
reads a start time (epoch seconds) from its input: the Nth thread is answered
at ``start + N * $SLOT_SECONDS``, so that two processes given the same start
answer each thread at the same moment. ``WAIT=1`` waits for a busy thread,
``FACE=async`` resumes through ``ainvoke``.

Prints one JSON line: for each thread, the outcome (``waiting``, ``answered``,
``busy``, or ``finished``: it waited, and nothing was left to approve) and the
seconds the resume took.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from langgraph.types import Command

from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.review import ApprovalError
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.thread_lock import WAIT_OPTION, ThreadBusyError
from reasoning_graphs.tools.spec import ToolSpec, tool_spec
from tests.helpers.crash_harness import command_line, open_checkpointer, report

APPROVE = Command(resume=[{"type": "approve"}])


def deploy_tool(log: Path) -> ToolSpec:
    def deploy(item: str) -> str:
        """Deploy ``item``: appends a line to the log."""
        with log.open("a") as out:
            out.write(f"deploy {item} {os.getpid()}\n")
        time.sleep(float(os.environ.get("DEPLOY_SECONDS", "0.5")))
        return f"deployed {item}"

    return tool_spec(deploy, dangerous=True)


def resumed(graph: Any, config: dict[str, Any]) -> str:
    """Approve the thread's deploy; how it went."""
    try:
        if os.environ.get("FACE") == "async":
            state = asyncio.run(graph.ainvoke(APPROVE, config))
        else:
            state = graph.invoke(APPROVE, config)
    except ThreadBusyError:
        return "busy"
    except ApprovalError:  # the other resumer had answered the approval
        return "finished"
    return "waiting" if state.get("__interrupt__") else "answered"


def main() -> None:
    db, log, (action, *threads) = command_line()
    saver, tools = open_checkpointer(db), [deploy_tool(log)]
    wait = os.environ.get("WAIT") == "1"

    def on(thread: str, script: list[Any]) -> tuple[Any, dict[str, Any]]:
        """A graph whose model replies ``script``, and the run config of ``thread``."""
        graph = build_graph(ScriptedChatModel(script=script), tools=tools, checkpointer=saver)
        return graph, {"configurable": {"thread_id": thread, WAIT_OPTION: wait}}

    if action == "ask":
        for thread in threads:
            graph, config = on(thread, [tool_call("deploy", item=thread)])
            graph.invoke({"messages": [("user", "Deploy.")]}, config)
        report({})
        return
    # each resumer's model starts after the call it approves
    runs = {thread: on(thread, ["Deployed."]) for thread in threads}
    start, slot = time.time(), float(os.environ.get("SLOT_SECONDS", "0"))
    if os.environ.get("BARRIER") == "1":
        print("ready", flush=True)
        start = float(sys.stdin.readline())
    outcomes, seconds = {}, {}
    for number, (thread, (graph, config)) in enumerate(runs.items()):
        time.sleep(max(0.0, start + number * slot - time.time()))
        began = time.perf_counter()
        outcomes[thread] = resumed(graph, config)
        seconds[thread] = time.perf_counter() - began
    report({"outcomes": outcomes, "seconds": seconds})


if __name__ == "__main__":
    main()
