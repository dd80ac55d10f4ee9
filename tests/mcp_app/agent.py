"""A served ReAct graph on a scripted model, with the tools of the MCP servers that
``$REASONING_GRAPHS_MCP`` names, for tests/test_dev_server_mcp.py.

Asked "add A B" the model calls the server's ``add``; asked "delete TITLE" its
destructive ``delete_note``; once it sees the observation it answers by quoting it.
The graph is built as the repo's own served graphs are (``pattern_builder.served``, which
gives it ``server_tools()``).
"""

from __future__ import annotations

import functools
import re

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.nodes.wiring import pattern_builder
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.output import content_text

ADD = re.compile(r"add (?P<a>\d+) (?P<b>\d+)")
DELETE = re.compile(r"delete (?P<title>\w+)")


def reply(messages: list[BaseMessage]) -> AIMessage | str:
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return f"The server said: {content_text(last.content)}"
    question = str(next(m for m in reversed(messages) if isinstance(m, HumanMessage)).content)
    if match := ADD.search(question):
        return tool_call("add", a=int(match["a"]), b=int(match["b"]))
    if match := DELETE.search(question):
        return tool_call("delete_note", title=match["title"])
    return "Ask me to 'add A B' or 'delete TITLE'."


served = pattern_builder.served(
    functools.partial(build_graph, ScriptedChatModel(script=[reply], cycle=True))
)
