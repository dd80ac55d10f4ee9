"""Tools that record when they ran, for tests of order, overlap and repeats."""

from __future__ import annotations

import threading
import time
from typing import Any

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
