"""An ``add`` tool that records its runs, for tests that count what really ran."""

from __future__ import annotations

from typing import Any

from reasoning_graphs.tools.spec import tool_spec


class Adder:
    """An ``add`` tool that records its runs (``dangerous``: it asks a person first)."""

    def __init__(self, *, dangerous: bool = False) -> None:
        self.runs: list[tuple[int, int]] = []
        self.dangerous = dangerous

    def spec(self) -> Any:
        def add(a: int, b: int) -> int:
            """Add two integers."""
            self.runs.append((a, b))
            return a + b

        return tool_spec(add, dangerous=self.dangerous)
