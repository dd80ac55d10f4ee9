"""One ``transfer`` call, killed after its side effect and before its result is saved.

Usage: python unknown_outcome_agent.py DB LOG PATTERN KIND [RESUME_JSON]

DB is a SQLite file path or a ``postgresql://`` URL; the thread id comes from
``$THREAD_ID``. PATTERN is ``react``, ``plan_execute``, ``llm_compiler`` or
``lats``; in each the model makes the one call ``transfer(amount=100)`` and
answers once it sees an observation. KIND says what the tool is:

- ``dangerous``: it needs a person's approval;
- ``once``: it needs none and is not idempotent (the default of a stateful tool);
- ``idempotent``: it needs none and is marked idempotent;
- ``dedupe``: the guarantees page's ``transfer``, which dedupes by its call id (the
  snippet ``dedupe_transfer.py``, run in the current folder).

``transfer`` appends ``done transfer AMOUNT CALL_ID`` to LOG (its side effect).
With ``$KILL=after_effect`` the process then kills itself with SIGKILL, before
the result can be saved; with ``$KILL=before_start`` it kills itself as the
call's start is about to be recorded, so the tool never starts. ``$FACE=async``
runs the graph with ``ainvoke``. With RESUME_JSON the thread is resumed
(``null`` resumes a crashed run). Prints the interrupts, how each transfer
was settled (from the trajectory) and the outcome as one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Annotated, Any

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId
from langgraph.types import Command

from reasoning_graphs.graphs import graph_builder
from reasoning_graphs.graphs.lats.prompts import LATS_JUDGE_SYSTEM
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.plan_execute.prompts import PLANNER_SYSTEM, REPLANNER_SYSTEM
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import ToolSpec, tool_spec
from tests.helpers.crash_harness import command_line, open_checkpointer, report, thread_config

SNIPPET = Path(__file__).with_name("dedupe_transfer.py")
DONE = "all done"
KINDS = {
    "dangerous": {"dangerous": True},
    "once": {},
    "idempotent": {"idempotent": True},
}


def kill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def logging_transfer(log: Path, options: dict[str, Any]) -> ToolSpec:
    """``transfer(amount)``: its side effect is a line in ``log``."""

    def transfer(amount: int, call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Send money."""
        with log.open("a") as out:
            out.write(f"done transfer {amount} {call_id}\n")
        if os.environ.get("KILL") == "after_effect":
            kill()
        return f"sent {amount}"

    return tool_spec(transfer, concurrency_safe=False, **options)


def dedupe_transfer(log: Path) -> ToolSpec:
    """The guarantees page's ``transfer``, run in the folder of ``log``; each run is a line in
    ``log``."""
    os.chdir(log.parent)  # the snippet keeps its bank.db in the current folder
    namespace: dict[str, Any] = {}
    exec(compile(SNIPPET.read_text(), str(SNIPPET), "exec"), namespace)
    (spec,) = namespace["tools"]

    def transfer(amount: int, to: str, call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Send money to an account."""
        receipt = namespace["transfer"](amount, to, call_id)
        with log.open("a") as out:
            out.write(f"ran transfer {call_id}\n")
        if os.environ.get("KILL") == "after_effect":
            kill()
        return receipt

    return tool_spec(transfer, idempotent=spec.idempotent)


def acted(prompt: list[BaseMessage]) -> bool:
    return any(isinstance(message, ToolMessage) for message in prompt)


def model_for(pattern: str, args: dict[str, Any]) -> ScriptedChatModel:
    """A model that answers each kind of prompt the same way in every process."""

    def reply(prompt: list[BaseMessage]) -> Any:
        system = prompt[0].text if prompt else ""
        if system.startswith(PLANNER_SYSTEM[:40]):
            return Plan(steps=["Send the money."])
        if system.startswith(REPLANNER_SYSTEM[:40]):
            return Replan(response=DONE)
        if system.startswith(LATS_JUDGE_SYSTEM[:40]):
            return {"feedback": "ok", "score": 0.9 if "Final answer" in prompt[-1].text else 0.5}
        if pattern == "llm_compiler":
            if "Plan the tool calls" in prompt[-1].text or "Plan the tool calls" in system:
                return {"tasks": [{"id": 1, "tool": "transfer", "args": args}]}
            return DONE
        if acted(prompt):
            return DONE
        return tool_call("transfer", id="pay-1", **args)

    return ScriptedChatModel(script=[reply], cycle=True)


def main() -> None:
    db, log, rest = command_line()
    pattern, kind, resume = rest[0], rest[1], rest[2:]
    if kind == "dedupe":
        tool, args = dedupe_transfer(log), {"amount": 100, "to": "ada"}
    else:
        tool, args = logging_transfer(log, KINDS[kind]), {"amount": 100}
    if os.environ.get("KILL") == "before_start":
        from reasoning_graphs.call_journal import CallJournal

        CallJournal.record_start = lambda self, key: kill()  # type: ignore[method-assign]
    options: dict[str, Any] = {"candidates": 1} if pattern == "lats" else {}
    graph = graph_builder(pattern)(
        model_for(pattern, args), tools=[tool], checkpointer=open_checkpointer(db), **options
    )
    if resume:
        value = json.loads(resume[0])
        payload: Any = None if value is None else Command(resume=value)
    else:
        payload = {"messages": [("user", "Send 100.")]}
    if os.environ.get("FACE") == "async":
        state = asyncio.run(graph.ainvoke(payload, thread_config("unknown-outcome")))
    else:
        state = graph.invoke(payload, thread_config("unknown-outcome"))
    observations = [
        {"status": event["status"], "decision": event["decision"]}
        for event in state.get("trajectory") or []
        if event["kind"] == "action" and event["tool"] == "transfer"
    ]
    report(
        {
            "interrupts": [i.value for i in state.get("__interrupt__", [])],
            "observations": observations,
            "rejected": state.get("rejected") or {},
            "outcome": state.get("outcome"),
        }
    )


if __name__ == "__main__":
    main()
