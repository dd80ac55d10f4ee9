"""``tool_loop``'s docstring lists the modules a tool call passes as they really are.

One call of a ReAct run is traced from the router that leaves the model's turn to the
router after its ``act`` task; the package modules it enters must be exactly the ones
the docstring lists, and as many as it says.
"""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

import reasoning_graphs
from reasoning_graphs.graphs.react.graph import build_graph
from reasoning_graphs.nodes.wiring import tool_loop
from reasoning_graphs.testing import ScriptedChatModel, tool_call

PACKAGE = Path(reasoning_graphs.__file__).parent


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _traced_path() -> list[str]:
    """The package modules entered from ``to_settle`` to the next ``to_act``, in order."""
    seen: list[tuple[str, str]] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(str(PACKAGE)):
            path = Path(frame.f_code.co_filename).relative_to(PACKAGE).as_posix()
            seen.append((path, frame.f_code.co_name))

    model = ScriptedChatModel(script=[tool_call("add", a=1, b=2), AIMessage("3")])
    graph = build_graph(model, [add], checkpointer="memory")
    sys.setprofile(profile)
    threading.setprofile(profile)  # type: ignore[arg-type]
    try:
        graph.invoke({"messages": [HumanMessage("1+2?")]}, {"configurable": {"thread_id": "t"}})
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    start = next(i for i, (_, name) in enumerate(seen) if name == "to_settle")
    end = next(i for i, (_, name) in enumerate(seen) if name == "to_act" and i > start)
    return list(dict.fromkeys(path for path, _ in seen[start:end]))


def _documented() -> tuple[set[str], int]:
    doc = tool_loop.__doc__ or ""
    listed = doc[doc.index("in the order it first enters them") : doc.index("That is")]
    stated = int(re.search(r"That is (\d+) modules", doc).group(1))  # type: ignore[union-attr]
    return set(re.findall(r"``([\w/]+\.py)``", listed)), stated


def test_the_docstring_lists_the_modules_a_call_passes() -> None:
    traced = _traced_path()
    listed, stated = _documented()
    assert set(traced) == listed, (
        f"missing from the docstring: {sorted(set(traced) - listed)}; "
        f"listed but not passed: {sorted(listed - set(traced))}"
    )
    assert len(traced) == stated
