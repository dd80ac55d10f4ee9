"""A served ReAct graph whose one tool is dangerous and slow, for tests/test_engines.py.

Asked "record ITEM", the scripted model calls ``record(item=ITEM)``, which needs a
person's approval; once it sees the observation it answers "done". ``record`` appends
``PID ITEM`` to the file ``$ENGINE_APP_LOG`` (its side effect, and which process ran
it), then waits while the file ``$ENGINE_APP_HOLD`` exists (at most a minute), so a
test can kill the process in the middle of the call.

The graph is made as the repo's own served graphs are
(:func:`~reasoning_graphs.nodes.wiring.pattern_builder.served`), so every engine reads
it and its runs may name only the models the deployment allows.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.nodes.wiring.pattern_builder import served
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import tool_spec

LOG_ENV = "ENGINE_APP_LOG"
HOLD_ENV = "ENGINE_APP_HOLD"
HOLD_LIMIT_S = 60.0
REQUEST = re.compile(r"record (?P<item>\S+)")


def record(item: str) -> str:
    """Record an item in the ledger."""
    with open(os.environ[LOG_ENV], "a") as ledger:
        ledger.write(f"{os.getpid()} {item}\n")
    hold, waited = Path(os.environ.get(HOLD_ENV, "")), 0.0
    while os.environ.get(HOLD_ENV) and hold.exists() and waited < HOLD_LIMIT_S:
        time.sleep(0.05)
        waited += 0.05
    return f"recorded {item}"


def reply(messages: list[BaseMessage]) -> AIMessage | str:
    """Record what the question names; answer once the tool has spoken."""
    if isinstance(messages[-1], ToolMessage):
        return "done"
    question = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    match = REQUEST.search(question.text)
    return tool_call("record", item=match["item"]) if match else "Ask me to 'record ITEM'."


def _build(**_: Any) -> Any:
    model = ScriptedChatModel(script=[reply], cycle=True)
    return build_graph(model, tools=[tool_spec(record, dangerous=True)])


graph = served(_build)
"""The app's graph; the engine supplies its persistence."""
