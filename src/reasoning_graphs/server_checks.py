"""Refuse a malformed run at the LangGraph server's door, before the server creates it.

``langgraph.json`` mounts :data:`~reasoning_graphs.server_app.app`
(``"http": {"app": ...}``), which puts the :class:`RunChecks` middleware in front of
every request. Every route that starts a run, stores
what later runs start with, or writes a thread's state is a door
(:data:`DOORS`): run creation (``/runs``, ``/stream``, ``/wait``,
``/runs/batch``, with or without a thread), assistants (``POST /assistants``,
``PATCH /assistants/{id}``), crons (creation with or without a thread,
``PATCH /runs/crons/{id}``), the event-streaming commands (``run.start``,
``input.respond``, over HTTP and WebSocket alike), ``POST /threads/{id}/state``
and the ``supersteps`` of ``POST /threads``. The routes that start runs through
these (MCP, A2A) call them on the server's own loopback, so their runs pass
here too. ``tests/test_server_doors.py`` lists the installed server's routes
and fails on one nobody has classified.

Each request is checked by the graph it names (a thread's graph is the one its
metadata names), with the checks the graph makes itself: a run's input, its
``Command`` and its options (:meth:`CheckedGraph.check_run`), the models a
served run may choose (:mod:`reasoning_graphs.served_models`), and state writes
(:meth:`CheckedGraph.check_write`, :meth:`CheckedGraph.check_command`). A
request that would fail gets ``422`` and a one-line reason, and nothing is
written (a refused WebSocket command gets the protocol's error frame instead,
and the socket stays open).

Run options arrive as ``context`` or as ``config.configurable``: langgraph-api
copies the latter into the former when no context is given, then drops what
the graph's schema does not name. Both are checked alike, less the keys of
``configurable`` that are the server's own (:func:`is_server_key`): the ids it
sets (thread, checkpoint, run, assistant, graph, cron, user), ``langgraph_*``
keys, ``__*`` keys, and the request headers it copies in (``x-*``,
``user-agent``, ``langsmith-*``).

Why at the door: a dropped option passes unnoticed (a misspelt ``max_step``),
and a run that fails on its input has already been queued and stored.

Which engines: the door reads langgraph-api's registry of graphs, so it checks
requests under ``langgraph dev`` and LangGraph Server. Under another engine that
mounts the app (Aegra) requests pass it untouched, and the same checks refuse the
run as it starts, inside the graph (:meth:`CheckedGraph.check_run`): the run ends
in an error with the same reason, and its thread is left as it was.
Requests for graphs that are not ours, or that the server will refuse anyway
(no such assistant, a body that is not JSON), pass through untouched.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Literal

from langgraph.types import Command
from starlette.responses import JSONResponse
from starlette.routing import compile_path

from reasoning_graphs.nodes.wiring.checked_graph import CheckedGraph
from reasoning_graphs.nodes.wiring.pattern_builder import is_served_factory
from reasoning_graphs.run_input import RunInputError
from reasoning_graphs.served_models import check_served_model

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

Door = Literal["run", "batch", "assistant", "cron_update", "command", "state", "thread"]
DOORS: dict[tuple[str, str], Door] = {
    ("POST", "/runs"): "run",
    ("POST", "/runs/stream"): "run",
    ("POST", "/runs/wait"): "run",
    ("POST", "/threads/{thread_id}/runs"): "run",
    ("POST", "/threads/{thread_id}/runs/stream"): "run",
    ("POST", "/threads/{thread_id}/runs/wait"): "run",
    ("POST", "/runs/batch"): "batch",
    ("POST", "/runs/crons"): "run",  # a cron stores a run's payload and starts it later
    ("POST", "/threads/{thread_id}/runs/crons"): "run",
    ("PATCH", "/runs/crons/{cron_id}"): "cron_update",
    ("POST", "/assistants"): "assistant",
    ("PATCH", "/assistants/{assistant_id}"): "assistant",
    ("POST", "/threads/{thread_id}/commands"): "command",
    ("WEBSOCKET", "/threads/{thread_id}/stream/events"): "command",
    ("POST", "/threads/{thread_id}/state"): "state",
    ("POST", "/threads"): "thread",  # its supersteps write the new (or existing) thread's state
}
"""Each door of the server, as (method, langgraph-api's path template), and how it is read."""
_ROUTES = [(method, compile_path(path)[0], door) for (method, path), door in DOORS.items()]

SERVER_KEYS = frozenset(
    {
        "thread_id",
        "checkpoint_id",
        "checkpoint_ns",
        "checkpoint_map",
        "run_id",
        "assistant_id",
        "graph_id",
        "cron_id",
        "user_id",
        "user-agent",
    }
)
SERVER_KEY_PREFIXES = ("langgraph_", "__", "x-", "langsmith-")
RUN_COMMANDS = ("run.start", "input.respond")
"""Event-streaming commands that start a run."""


def door_of(method: str, path: str) -> Door | None:
    """How a request to ``path`` is checked, or ``None`` when it is not a door."""
    found = _door_and_params(method, path)
    return found[0] if found else None


def _door_and_params(method: str, path: str) -> tuple[Door, dict[str, str]] | None:
    """The door a request comes through, with the ids its path names."""
    for door_method, pattern, door in _ROUTES:
        matched = pattern.match(path) if door_method == method else None
        if matched:
            return door, matched.groupdict()
    return None


def is_server_key(key: str) -> bool:
    """Whether a key of ``config.configurable`` is the server's own rather than a run option."""
    return key in SERVER_KEYS or key.startswith(SERVER_KEY_PREFIXES)


def sent_options(payload: Mapping[str, Any]) -> list[Any]:
    """The run options a request sends: its ``context`` and its own keys of ``configurable``."""
    sent = [payload["context"]] if payload.get("context") else []
    config = payload.get("config")
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    if isinstance(configurable, Mapping):
        own = {key: value for key, value in configurable.items() if not is_server_key(key)}
        if own:
            sent.append(own)
    return sent


class RunChecks:
    """ASGI middleware: check each run a request would start; see the module docstring."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._graph_ids: dict[str, str] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = "WEBSOCKET" if scope["type"] == "websocket" else scope.get("method", "")
        found = _door_and_params(method, _route_path(scope))
        if found is None or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            checked = self._checked_frames(found[1]["thread_id"], receive, send)
            await self.app(scope, checked, send)
        else:
            await self._check_request(*found, scope, receive, send)

    async def _check_request(
        self, door: Door, ids: dict[str, str], scope: Scope, receive: Receive, send: Send
    ) -> None:
        body = await _read_body(receive)
        try:
            payload = json.loads(body or b"null")
        except ValueError:
            payload = None  # not JSON: the server's own validation answers
        problem = await self._problem(door, ids, payload)
        if problem is None:
            await self.app(scope, _replayed(body, receive), send)
            return
        refusal: dict[str, Any] = {"detail": problem}
        if door == "command":
            refusal = {**_command_error(payload, problem), **refusal}
        await JSONResponse(refusal, status_code=422)(scope, receive, send)

    def _checked_frames(self, thread_id: str, receive: Receive, send: Send) -> Receive:
        """A ``receive`` that answers each refused command with an error frame, unseen by
        the server, and hands on every other message."""

        async def next_message() -> Message:
            while True:
                message = await receive()
                if message["type"] != "websocket.receive":
                    return message
                try:
                    command = json.loads(message.get("text") or message.get("bytes") or b"")
                except ValueError:
                    return message
                problem = await self._command_problem(thread_id, command)
                if problem is None:
                    return message
                frame = json.dumps(_command_error(command, problem))
                await send({"type": "websocket.send", "text": frame})

        return next_message

    async def _problem(self, door: Door, ids: dict[str, str], payload: Any) -> str | None:
        """Why the request's runs, stored options or state writes cannot be; ``None``: they can."""
        if door == "batch":
            runs = payload if isinstance(payload, list) else []
            for run in runs:
                problem = await self._run_problem(run) if isinstance(run, dict) else None
                if problem:
                    return problem
            return None
        if not isinstance(payload, dict):
            return None  # the server's own validation answers
        if door == "command":
            return await self._command_problem(ids["thread_id"], payload)
        if door == "assistant":
            graph = await self._graph(payload.get("graph_id") or ids.get("assistant_id"))
            self._graph_ids.pop(ids.get("assistant_id", ""), None)  # a patch may move its graph
            return _refusal(graph, _run_check(None, sent_options(payload)))
        if door == "state":
            return _refusal(await self._thread_graph(ids["thread_id"]), _write_check([payload]))
        if door == "thread":
            return await self._supersteps_problem(payload)
        if door == "cron_update":
            cron = await self._loopback_get(f"/runs/crons/{ids['cron_id']}")
            return await self._run_problem(
                {**payload, "assistant_id": (cron or {}).get("assistant_id")}
            )
        return await self._run_problem(payload)

    async def _run_problem(self, run: Mapping[str, Any]) -> str | None:
        graph = await self._graph(run.get("assistant_id"))
        run_input = _command(run["command"]) if run.get("command") else run.get("input")
        return _refusal(graph, _run_check(run_input, sent_options(run)))

    async def _supersteps_problem(self, payload: Mapping[str, Any]) -> str | None:
        """Why a new thread's state writes (``supersteps``) cannot be made."""
        supersteps = payload.get("supersteps")
        if not isinstance(supersteps, list) or not supersteps:
            return None
        thread_id = payload.get("thread_id")
        existing = await self._loopback_get(f"/threads/{thread_id}") if thread_id else None
        graph = await self._graph(_graph_id_of(existing or payload))
        updates = [
            update
            for superstep in supersteps
            if isinstance(superstep, dict)
            for update in superstep.get("updates") or ()
            if isinstance(update, dict)
        ]
        return _refusal(graph, _write_check(updates))

    async def _command_problem(self, thread_id: str, command: Any) -> str | None:
        """Why an event-streaming command's run cannot start (options come as ``config``)."""
        if not isinstance(command, dict) or command.get("method") not in RUN_COMMANDS:
            return None
        params = command.get("params")
        if not isinstance(params, dict):
            return None
        thread = await self._loopback_get(f"/threads/{thread_id}")
        if command["method"] == "input.respond":  # a resume of the thread's own graph
            graph = await self._graph(_graph_id_of(thread))
            changes = _command({"update": params.get("update"), "goto": params.get("goto")})
            return _refusal(graph, _run_check(changes, sent_options(params)))
        waiting = bool(thread and thread.get("status") == "interrupted")
        new_input = None if waiting else params.get("input")  # the server resumes with it
        graph = await self._graph(params.get("assistant_id"))
        return _refusal(graph, _run_check(new_input, sent_options(params)))

    async def _graph(self, assistant_id: Any) -> CheckedGraph | None:
        """The graph an assistant id (or a graph name) runs, when it is one of ours."""
        # the server's registry of its graphs, loaded when langgraph-api serves this app
        registry = sys.modules.get("langgraph_api.graph")
        if not isinstance(assistant_id, str) or registry is None:
            return None
        graphs = registry.GRAPHS
        graph_id = assistant_id if assistant_id in graphs else await self._graph_id(assistant_id)
        graph = graphs.get(graph_id) if graph_id else None
        if is_served_factory(graph):  # built on first use: off the event loop
            graph = await asyncio.to_thread(graph)
        return graph if isinstance(graph, CheckedGraph) else None

    async def _thread_graph(self, thread_id: str) -> CheckedGraph | None:
        """The graph whose runs a thread holds (the server keeps its id in the metadata)."""
        return await self._graph(_graph_id_of(await self._loopback_get(f"/threads/{thread_id}")))

    async def _graph_id(self, assistant_id: str) -> str | None:
        """The graph of a stored assistant, asked of the server itself (and remembered)."""
        if assistant_id not in self._graph_ids:
            assistant = await self._loopback_get(f"/assistants/{assistant_id}")
            if assistant is None:
                return None
            self._graph_ids[assistant_id] = assistant["graph_id"]
        return self._graph_ids[assistant_id]

    async def _loopback_get(self, path: str) -> dict[str, Any] | None:
        """``GET path`` of the server itself; ``None`` when it has no such thing."""
        from langgraph_sdk import get_client

        try:
            found = await get_client(url=None).http.get(path)
        except Exception:  # not found, or not valid: the server answers the request itself
            return None
        return found if isinstance(found, dict) else None


Check = Callable[[CheckedGraph], None]


def _refusal(graph: CheckedGraph | None, check: Check) -> str | None:
    """The reason ``check`` refuses the request for ``graph``; ``None`` for graphs not ours."""
    if graph is None:
        return None
    try:
        check(graph)
    except RunInputError as error:
        return str(error)
    return None


def _run_check(run_input: Any, options: list[Any]) -> Check:
    """A run of ``run_input`` (a new input, a ``Command`` or ``None``) with each of ``options``,
    checked as the graph checks it when the server starts it."""

    def check(graph: CheckedGraph) -> None:
        graph.check_run(run_input)
        for sent in options:
            graph.check_run(None, sent)
            check_served_model(sent)

    return check


def _write_check(updates: list[Any]) -> Check:
    """State writes as the server sends them (``values`` and ``as_node``, or a ``command``)."""

    def check(graph: CheckedGraph) -> None:
        for update in updates:
            command = _command(update["command"]) if update.get("command") else None
            if command is not None:
                graph.check_command(command)
            else:
                graph.check_write(update.get("values"), update.get("as_node"))

    return check


def _command(payload: Any) -> Command | None:
    """A run's ``command`` as the server reads it; ``None`` when it cannot read it (and refuses
    the request itself)."""
    from langgraph_api.command import map_cmd

    try:
        return map_cmd(payload)
    except (AttributeError, KeyError, TypeError):
        return None


def _graph_id_of(thread: Mapping[str, Any] | None) -> Any:
    """The graph id a thread (or a request to create one) keeps in its metadata."""
    metadata = (thread or {}).get("metadata")
    return metadata.get("graph_id") if isinstance(metadata, Mapping) else None


def _command_error(command: Any, problem: str) -> dict[str, Any]:
    """The event-streaming protocol's answer to a command it refuses."""
    command_id = command.get("id") if isinstance(command, dict) else None
    return {"type": "error", "id": command_id, "error": "invalid_argument", "message": problem}


def _route_path(scope: Scope) -> str:
    """The request's path as the server's routes see it (without a mount prefix)."""
    path: str = scope.get("path", "")
    root = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


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


"""The server's custom app: no routes of its own, only the checks."""
