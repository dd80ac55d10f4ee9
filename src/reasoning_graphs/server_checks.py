"""Refuse a malformed run at the LangGraph server's door, before the server creates it.

``langgraph.json`` mounts :data:`app` (``"http": {"app": ...}``), whose only
job is the :class:`RunChecks` middleware. Each request that creates a run
(``POST .../runs``, ``/runs/stream``, ``/runs/wait``, ``/runs/batch``,
``/runs/crons``) or sets an assistant's options (``POST /assistants``,
``PATCH /assistants/{id}``) is checked by the graph it names, with the same
checks the graph makes when it starts (:meth:`CheckedGraph.check_run`); a run
that would fail on its input gets ``422`` and a one-line reason, and nothing
is written to its thread.

Why at the door: the server drops run options its schema does not name before
the graph sees them (a misspelt ``max_step`` would pass unnoticed), and a run
that fails on its input has already been queued and stored. Requests for
graphs that are not ours, or that the server will refuse anyway (no such
assistant, a body that is not JSON), pass through untouched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import JSONResponse

from reasoning_graphs.nodes.checked_graph import CheckedGraph
from reasoning_graphs.run_input import RunInputError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

RUN_PATH = re.compile(r"(?:^|/)(?:threads/[^/]+/)?runs(?:/stream|/wait|/crons)?/?$")
BATCH_PATH = re.compile(r"(?:^|/)runs/batch/?$")
ASSISTANT_PATH = re.compile(r"(?:^|/)assistants(?:/(?P<assistant>[^/]+))?/?$")


class RunChecks:
    """ASGI middleware: check each run a request would create; see the module docstring."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._graph_ids: dict[str, str] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PATCH"):
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        checked = RUN_PATH.search(path) or BATCH_PATH.search(path) or ASSISTANT_PATH.search(path)
        if checked is None:
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        try:
            problem = await self._problem(scope["method"], path, json.loads(body or b"null"))
        except ValueError:
            problem = None  # not JSON: the server's own validation answers
        if problem is not None:
            await JSONResponse({"detail": problem}, status_code=422)(scope, receive, send)
            return
        await self.app(scope, _replayed(body, receive), send)

    async def _problem(self, method: str, path: str, payload: Any) -> str | None:
        """Why the request's runs (or assistant options) cannot start; ``None``: they can."""
        if assistant := ASSISTANT_PATH.search(path):
            creates = method == "POST" and not assistant["assistant"]
            updates = method == "PATCH" and bool(assistant["assistant"])
            if not (creates or updates) or not isinstance(payload, dict):
                return None
            graph = await self._graph(payload.get("graph_id") or assistant["assistant"])
            return _refusal(graph, None, payload.get("context"))
        runs = payload if BATCH_PATH.search(path) and isinstance(payload, list) else [payload]
        for run in runs:
            if not isinstance(run, dict):
                continue
            graph = await self._graph(run.get("assistant_id"))
            new_input = None if run.get("command") else run.get("input")
            problem = _refusal(graph, new_input, run.get("context"))
            if problem is not None:
                return problem
        return None

    async def _graph(self, assistant_id: Any) -> CheckedGraph | None:
        """The graph an assistant id (or a graph name) runs, when it is one of ours."""
        if not isinstance(assistant_id, str):
            return None
        try:
            from langgraph_api.graph import GRAPHS  # the server's registry of its graphs
        except ImportError:
            return None
        graph_id = assistant_id if assistant_id in GRAPHS else await self._graph_id(assistant_id)
        graph = GRAPHS.get(graph_id) if graph_id else None
        return graph if isinstance(graph, CheckedGraph) else None

    async def _graph_id(self, assistant_id: str) -> str | None:
        """The graph of a stored assistant, asked of the server itself (and remembered)."""
        if assistant_id not in self._graph_ids:
            from langgraph_sdk import get_client

            try:
                assistant = await get_client(url=None).assistants.get(assistant_id)
            except Exception:  # no such assistant: the server answers the request itself
                return None
            self._graph_ids[assistant_id] = assistant["graph_id"]
        return self._graph_ids[assistant_id]


def _refusal(graph: CheckedGraph | None, new_input: Any, context: Any) -> str | None:
    if graph is None:
        return None
    try:
        graph.check_run(new_input, context or None)
    except RunInputError as error:
        return str(error)
    return None


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replayed(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the already-read body to the app, then listens again."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


app = Starlette(middleware=[Middleware(RunChecks)])
"""The server's custom app: no routes of its own, only the checks."""
