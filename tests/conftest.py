"""Fixtures every test file may ask for: recorded tools, a fresh thread, the servers."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from reasoning_graphs.tools.spec import ToolSpec
from tests.helpers.openai_server import llama_server, openai_server  # noqa: F401 (fixtures)
from tests.helpers.postgres_db import postgres_url  # noqa: F401 (fixture)
from tests.helpers.tool_log import ToolLog, sleeping_tool


@pytest.fixture
def log() -> ToolLog:
    return ToolLog()


@pytest.fixture
def thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"test-{uuid.uuid4().hex[:8]}"}}


@pytest.fixture
def tools(log: ToolLog) -> list[ToolSpec]:
    """A read-only lookup, a stateful summarize and a dangerous deploy, all recorded in ``log``."""
    return [
        sleeping_tool(log, "lookup", safe=True),
        sleeping_tool(log, "summarize", safe=False),
        sleeping_tool(log, "deploy", safe=False, dangerous=True),
    ]
