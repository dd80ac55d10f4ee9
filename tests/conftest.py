"""Shared test helpers: recording tools and a thread config factory."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest

from openai_server import llama_server, openai_server  # noqa: F401 (fixtures)
from postgres_db import postgres_url  # noqa: F401 (fixture)
from reasoning_graphs.tools.spec import ToolSpec, tool_spec


class ToolLog:
    """Records every tool execution with start and end times (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: list[dict[str, Any]] = []

    def record(self, name: str, args: dict[str, Any], started: float) -> None:
        with self.lock:
            self.runs.append(
                {"name": name, "args": args, "start": started, "end": time.perf_counter()}
            )

    def names(self) -> list[str]:
        return [run["name"] for run in self.runs]


@pytest.fixture
def log() -> ToolLog:
    return ToolLog()


@pytest.fixture
def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"test-{uuid.uuid4().hex[:8]}"}}


def counted_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """Replaces ``owner.name`` with a wrapper that counts its calls; the count is item 0."""
    count = [0]
    original = getattr(owner, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return count


def sleeping_tool(
    log: ToolLog, name: str, seconds: float = 0.0, *, safe: bool, dangerous: bool = False
) -> ToolSpec:
    """A tool that sleeps, records its run and echoes its input."""

    def run(item: str) -> str:
        started = time.perf_counter()
        time.sleep(seconds)
        log.record(name, {"item": item}, started)
        return f"{name} done with {item}"

    run.__name__ = name
    run.__doc__ = f"Test tool {name}: processes one item."
    return tool_spec(run, concurrency_safe=safe, dangerous=dangerous)


@pytest.fixture
def tools(log: ToolLog) -> list[ToolSpec]:
    """A read-only lookup, a stateful summarize and a dangerous deploy, all recorded in ``log``."""
    return [
        sleeping_tool(log, "lookup", safe=True),
        sleeping_tool(log, "summarize", safe=False),
        sleeping_tool(log, "deploy", safe=False, dangerous=True),
    ]


def without_note(outcome: dict[str, Any]) -> dict[str, Any]:
    """An outcome as compared in tests: how it ended and why, without the note an
    incomplete answer carries for its reader (its wording is the runtime's)."""
    return {key: value for key, value in outcome.items() if key != "note"}
