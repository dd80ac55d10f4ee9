"""The two faces of a graph, for tests that run the same question on each."""

from __future__ import annotations

import asyncio
from typing import Any

FACES = ["sync", "async"]


def run(graph: Any, value: Any, face: str, config: dict[str, Any] | None = None) -> Any:
    """``graph`` run on ``value`` through the sync or the async face."""
    if face == "sync":
        return graph.invoke(value, config)
    return asyncio.run(graph.ainvoke(value, config))
