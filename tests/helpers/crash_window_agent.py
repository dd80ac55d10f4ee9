"""A pattern making three stateful calls on a SQLite checkpointer, driven from another process.

Usage: python crash_window_agent.py DB LOG PATTERN [resume]

PATTERN is ``react``, ``plan_execute``, ``lats`` or ``llm_compiler``; each makes
the calls ``record(a)``, ``record(b)`` and ``record(c)`` in one turn (one plan
step, one expansion, one plan). ``record`` appends ``start ITEM`` to LOG, sleeps
``$SLEEP`` seconds (default 0.05) and appends ``finish ITEM``. With
``$KILL_AT=ITEM`` the process kills itself with SIGKILL as that call starts,
after writing ``kill`` to LOG. ``$WRITE_DELAY`` seconds (default 0) slow each
write to the checkpointer, as a remote database does, which widens any
window between a call finishing and its result being saved. ``record`` is
idempotent (a call cut short runs again on resume) unless ``$IDEMPOTENT=0``.
With ``resume`` the crashed run of ``$THREAD_ID`` is resumed instead of started.

The model is a function of its prompt, not a script, so a resumed process
answers exactly as the crashed one would have.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from reasoning_graphs.graphs import graph_builder
from reasoning_graphs.graphs.lats.prompts import LATS_JUDGE_SYSTEM
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.plan_execute.prompts import PLANNER_SYSTEM, REPLANNER_SYSTEM
from reasoning_graphs.testing import ScriptedChatModel, tool_calls
from reasoning_graphs.tools.spec import ToolSpec, tool_spec
from tests.helpers.crash_harness import command_line, open_checkpointer, report, thread_config

THREAD = thread_config("crash-window")
ITEMS = ("a", "b", "c")
DONE = "all done"


def record_tool(log: Path) -> ToolSpec:
    """The stateful tool: every start and finish is a line in ``log``."""
    sleep = float(os.environ.get("SLEEP", "0.05"))
    kill_at = os.environ.get("KILL_AT")

    def write(line: str) -> None:
        with log.open("a") as out:
            out.write(line + "\n")

    def record(item: str) -> str:
        """Record an item."""
        write(f"start {item}")
        if item == kill_at:
            write("kill")
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(sleep)
        write(f"finish {item}")
        return f"recorded {item}"

    idempotent = os.environ.get("IDEMPOTENT", "1") == "1"
    return tool_spec(record, concurrency_safe=False, idempotent=idempotent, timeout=None)


def slowed_writes(saver: BaseCheckpointSaver) -> BaseCheckpointSaver:
    """``saver`` with each checkpoint and task write delayed by ``$WRITE_DELAY`` seconds."""
    delay = float(os.environ.get("WRITE_DELAY", "0"))
    for name in ("put", "put_writes"):
        write = getattr(saver, name)

        def delayed(*args: Any, _write: Any = write, **kwargs: Any) -> Any:
            time.sleep(delay)
            return _write(*args, **kwargs)

        setattr(saver, name, delayed)
    return saver


def acted(prompt: list[BaseMessage]) -> bool:
    return any(isinstance(message, ToolMessage) for message in prompt)


def model_for(pattern: str) -> ScriptedChatModel:
    """A model that answers each kind of prompt the same way in every process."""
    samples = itertools.cycle(ITEMS)  # LATS: the three samples of one expansion differ
    lock = threading.Lock()

    def reply(prompt: list[BaseMessage]) -> Any:
        system = prompt[0].text if prompt else ""
        if system.startswith(PLANNER_SYSTEM[:40]):
            return Plan(steps=["Record a, b and c."])
        if system.startswith(REPLANNER_SYSTEM[:40]):
            return Replan(response=DONE)
        if system.startswith(LATS_JUDGE_SYSTEM[:40]):
            return {"feedback": "ok", "score": 0.9 if "Final answer" in prompt[-1].text else 0.5}
        if pattern == "llm_compiler":
            if "Plan the tool calls" in prompt[-1].text or "Plan the tool calls" in system:
                tasks = [
                    {"id": n, "tool": "record", "args": {"item": item}}
                    for n, item in enumerate(ITEMS, start=1)
                ]
                return {"tasks": tasks}
            return DONE
        if acted(prompt):
            return DONE
        if pattern == "lats":
            with lock:
                item = next(samples)
            return tool_calls(("record", {"item": item}))
        return tool_calls(*[("record", {"item": item}, f"call-{item}") for item in ITEMS])

    return ScriptedChatModel(script=[reply], cycle=True)


def main() -> None:
    db, log, rest = command_line()
    pattern, resuming = rest[0], rest[1:] == ["resume"]
    options: dict[str, Any] = {"candidates": 3} if pattern == "lats" else {}
    graph = graph_builder(pattern)(
        model_for(pattern),
        tools=[record_tool(log)],
        checkpointer=slowed_writes(open_checkpointer(db)),
        **options,
    )
    payload = None if resuming else {"messages": [("user", "Record a, b and c.")]}
    state = graph.invoke(payload, THREAD)
    report({"last": state["messages"][-1].content, "outcome": state.get("outcome")})


if __name__ == "__main__":
    main()
