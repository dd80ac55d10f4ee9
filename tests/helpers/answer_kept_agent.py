"""Threads of one dangerous ``transfer`` call each, asked about, approved and killed by
test_answer_kept.py.

Usage: python answer_kept_agent.py FOLDER STEP THREAD…

Each THREAD id starts with its pattern (``react``, ``llm_compiler`` or ``lats``,
then ``-``) and keeps its checkpoints in ``FOLDER/THREAD.sqlite`` and its tool
log in ``FOLDER/THREAD.log``. The model (unknown_outcome_agent.py's) makes the
one call ``transfer(amount=100)`` and answers once it sees an observation;
``transfer`` needs a person's approval, appends ``start transfer`` to the log,
runs for :data:`TOOL_SECONDS`, then appends ``done transfer``.

STEP is ``ask`` (a new question), ``approve`` (resume with an approval; the
log gets ``resume`` first) or ``continue`` (``invoke(None)``: carry on a run
that was cut short). With ``$PAUSE=saved`` every checkpoint the run saves is
followed by ``saved`` in the log and a long pause, so a test can kill the
process right after the step that took the person's answer is saved. Prints,
as one JSON line, each thread's interrupts and how its transfers were settled.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from reasoning_graphs.graphs import graph_builder
from reasoning_graphs.tools.spec import ToolSpec, tool_spec
from tests.helpers.crash_harness import open_checkpointer, report
from tests.helpers.unknown_outcome_agent import model_for

TOOL_SECONDS = 1.0
"""How long ``transfer`` runs: long enough for a kill to land while it runs."""
PAUSE_SECONDS = 120.0
PAYLOADS: dict[str, Any] = {
    "ask": {"messages": [("user", "Send 100.")]},
    "approve": Command(resume="approve"),
    "continue": None,
}


def note(log: Path, line: str) -> None:
    with log.open("a") as out:
        out.write(f"{line}\n")


def slow_transfer(log: Path) -> ToolSpec:
    """``transfer(amount)``, dangerous and stateful; its start and end are lines in ``log``."""

    def transfer(amount: int) -> str:
        """Send money."""
        note(log, "start transfer")
        time.sleep(TOOL_SECONDS)
        note(log, f"done transfer {amount}")
        return f"sent {amount}"

    return tool_spec(transfer, dangerous=True, concurrency_safe=False)


def pause_after_each_save(saver: BaseCheckpointSaver, log: Path) -> None:
    """Make ``saver`` note ``saved`` in ``log`` and pause once it has saved a checkpoint."""
    put = saver.put

    def put_then_pause(*args: Any, **kwargs: Any) -> Any:
        saved = put(*args, **kwargs)
        note(log, "saved")
        time.sleep(PAUSE_SECONDS)
        return saved

    saver.put = put_then_pause  # type: ignore[method-assign]


def run_step(folder: Path, step: str, thread_id: str) -> dict[str, Any]:
    """Run ``step`` on ``thread_id``; its interrupts and the decisions on its transfers."""
    pattern = thread_id.split("-")[0]
    log = folder / f"{thread_id}.log"
    saver = open_checkpointer(str(folder / f"{thread_id}.sqlite"))
    if os.environ.get("PAUSE") == "saved":
        pause_after_each_save(saver, log)
    options: dict[str, Any] = {"candidates": 1} if pattern == "lats" else {}
    graph = graph_builder(pattern)(
        model_for(pattern, {"amount": 100}),
        tools=[slow_transfer(log)],
        checkpointer=saver,
        **options,
    )
    if step == "approve":
        note(log, "resume")
    state = graph.invoke(PAYLOADS[step], {"configurable": {"thread_id": thread_id}})
    return {
        "interrupts": [i.value for i in state.get("__interrupt__", [])],
        "decisions": [
            event["decision"]
            for event in state.get("trajectory") or []
            if event["kind"] == "action" and event["tool"] == "transfer"
        ],
    }


def main() -> None:
    folder, step, thread_ids = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
    report({thread_id: run_step(folder, step, thread_id) for thread_id in thread_ids})


if __name__ == "__main__":
    main()
