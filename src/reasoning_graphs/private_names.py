"""Every private name of LangGraph and LangChain the package uses, each with its fallback.

These names are not part of either library's public API and may move in any release.
Importing them here alone means an upgrade that moves one changes one file, and each
has a fallback that keeps the package working, more slowly or with less, never broken:

- ``RunnableCallable``: the runnable LangGraph makes of a plain function, which runs a
  node or router without the public wrapper's tracing (``None``: the public wrapper).
- ``CONF``, ``CONFIG_KEY_READ``: where a task finds its read of the state (a tool with
  an injected state argument; the fallback is their current values).
- ``local_read``, ``ChannelRead``: LangGraph's read of the state for a router, which the
  package narrows to what the router reads (``None``: LangGraph's own read).
- ``CONFIG_KEY_DURABILITY``: the config key of a run's durability mode (``None``: the
  default mode, with a warning).
- ``StreamingCallbackHandler``: the mark of a callback handler that makes LangChain
  stream a model call (``None``: every watched call streams).
- ``messages_delta_reducer``: LangGraph's reducer of a batch of message writes
  (``None``: each write merged with ``add_messages``, the same result more slowly).
- ``SubagentTransformer``: LangChain's stream transformer of ``run.subagents`` (``None``:
  that projection is left out).
- ``trace_policy_of``: the trace policy a middleware's hook spans follow, its own or the
  process-wide default ``configure_trace_policy`` set (fallback: its own only).
"""

from __future__ import annotations

from typing import Any, Literal

RunnableCallable: Any
CONF: Literal["configurable"]
CONFIG_KEY_READ: str
local_read: Any
ChannelRead: Any
CONFIG_KEY_DURABILITY: str | None
StreamingCallbackHandler: Any
messages_delta_reducer: Any
trace_policy_of: Any
SubagentTransformer: Any

try:
    from langgraph._internal._runnable import RunnableCallable
except ImportError:  # pragma: no cover - depends on the LangGraph version
    RunnableCallable = None

try:
    from langgraph._internal._constants import CONF, CONFIG_KEY_READ
except ImportError:  # pragma: no cover - depends on the LangGraph version
    CONF, CONFIG_KEY_READ = "configurable", "__pregel_read"

try:
    from langgraph.pregel._algo import local_read
    from langgraph.pregel._read import ChannelRead
except ImportError:  # pragma: no cover - depends on the LangGraph version
    local_read = ChannelRead = None

try:
    from langgraph._internal._constants import CONFIG_KEY_DURABILITY
except ImportError:  # pragma: no cover - depends on the LangGraph version
    CONFIG_KEY_DURABILITY = None

try:
    from langchain_core.tracers._streaming import (
        _StreamingCallbackHandler as StreamingCallbackHandler,
    )
except ImportError:  # pragma: no cover - depends on the LangChain version
    StreamingCallbackHandler = None

try:
    from langgraph.graph.message import _messages_delta_reducer as messages_delta_reducer
except ImportError:  # pragma: no cover - depends on the LangGraph version
    messages_delta_reducer = None

try:
    from langchain.agents.middleware._trace_policy import _resolve as trace_policy_of
except ImportError:  # pragma: no cover - depends on the LangChain version

    def trace_policy_of(policy: Any) -> Any:
        return policy


try:
    from langchain.agents._subagent_transformer import SubagentTransformer
except ImportError:  # pragma: no cover - depends on the LangChain version
    SubagentTransformer = None
