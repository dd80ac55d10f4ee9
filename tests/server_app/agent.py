"""ReAct graphs on a scripted model, for the dev-server tests (tests/test_dev_server.py).

The model writes files: asked "write <text> to <path>", it calls the dangerous
``write_file`` tool; once it sees the tool's observation, it answers by quoting
it. Asked for a typed answer (a run's ``response_format``), it gives the answer's
text as the field ``said``. The workspace comes from ``REASONING_GRAPHS_WORKSPACE``,
which the test sets:
``graph`` writes in it, ``served`` in a folder per thread inside it, as the
graphs of the repo's own ``langgraph.json`` do.
"""

from __future__ import annotations

import os
import re
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.nodes.steps.typed_answer import TYPED_SYSTEM
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import WORKSPACE_ENV, server_tools, write_file

REQUEST = re.compile(r"write (?P<content>.+?) to (?P<path>\S+)", re.IGNORECASE)
NO_WORKSPACE = f"Set {WORKSPACE_ENV} to the folder the test app may write to."
ANSWER = "Finished. The tool said: {observation}"
TYPED_REQUEST = TYPED_SYSTEM.split(".")[0]
ANSWER_HEADING = "\n\nAnswer:\n"


def reply(messages: list[BaseMessage]) -> AIMessage | str | dict[str, Any]:
    """Answer from the last observation, or ask to write the requested file; asked for a
    typed answer, give the answer's text as ``said``."""
    first, last = messages[0], messages[-1]
    if isinstance(first, SystemMessage) and first.text.startswith(TYPED_REQUEST):
        return {"said": last.text.partition(ANSWER_HEADING)[2]}
    if isinstance(last, ToolMessage):
        return ANSWER.format(observation=last.content)
    question = next(m for m in reversed(messages) if isinstance(m, HumanMessage))
    match = REQUEST.search(str(question.content))
    if match is None:
        return "Ask me to 'write <text> to <path>'."
    return tool_call("write_file", path=match["path"], content=match["content"])


if not os.environ.get(WORKSPACE_ENV):
    raise RuntimeError(NO_WORKSPACE)

graph = build_graph(
    ScriptedChatModel(script=[reply], cycle=True),
    tools=[write_file(os.environ[WORKSPACE_ENV])],
)
"""The app's only graph; the dev server supplies its persistence."""

served = build_graph(ScriptedChatModel(script=[reply], cycle=True), tools=server_tools())
"""The same app with the served graphs' tools: each thread writes in a folder of its own
inside ``REASONING_GRAPHS_WORKSPACE``."""
