"""An LLM Compiler agent whose task writes are slow to land, killed by test_compiler_guarantees.py.

Usage: python compiler_kill_agent.py DB LOG

The plan is three stateful tasks, ``note(1)``, ``note(2)``, ``note(3)``; each
appends ``start N`` then ``done N`` to LOG. The checkpointer saves each task's
pending write half a second late (a slow disk or a remote database), which
widens the window between a task finishing and its write being saved, so a
test that kills the process once ``start 3`` is logged finds out whether
tasks 1 and 2 were saved before the next one started.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.graphs.llm_compiler import build_graph
from reasoning_graphs.testing import ScriptedChatModel
from reasoning_graphs.tools.spec import tool_spec
from tests.helpers.crash_harness import command_line, report, thread_config

THREAD = thread_config("compiler-kill")
PLAN = {"tasks": [{"id": i, "tool": "note", "args": {"item": str(i)}} for i in (1, 2, 3)]}
WRITE_DELAY = 0.5
LAST_TASK_SECONDS = 2.0
"""How long ``note(3)`` runs: the kill lands while it runs, however loaded the machine."""


class SlowWrites(SqliteSaver):
    """Saves a task's pending writes only after a delay."""

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        time.sleep(WRITE_DELAY)
        super().put_writes(config, writes, task_id, task_path)


def agent(db: str, log: Path, script: list[Any], *, slow: bool) -> CompiledStateGraph:
    """The graph on ``db`` with the logging ``note`` tool and ``script`` as the model."""

    def note(item: str) -> str:
        """Write a note (stateful)."""
        with log.open("a") as out:
            out.write(f"start {item}\n")
        time.sleep(LAST_TASK_SECONDS if item == "3" else 0.05)
        with log.open("a") as out:
            out.write(f"done {item}\n")
        return f"noted {item}"

    saver_class = SlowWrites if slow else SqliteSaver
    saver = saver_class(sqlite3.connect(db, check_same_thread=False))
    tools = [tool_spec(note, concurrency_safe=False, idempotent=True)]  # a cut-short note reruns
    return build_graph(ScriptedChatModel(script=script), tools=tools, checkpointer=saver)


def main() -> None:
    db, log, _ = command_line()
    graph = agent(db, log, [PLAN, {"answer": "noted", "replan": False}], slow=True)
    state = graph.invoke({"messages": [("user", "note three times")]}, THREAD)
    report({"last": state["messages"][-1].content})


if __name__ == "__main__":
    main()
