"""Tools from MCP servers, run with the execution facts their annotations state.

Servers are named in the JSON that MCP clients share (``{"mcpServers": {name: {...}}}``):
an entry with ``command`` (and ``args``, ``env``, ``cwd``) is a stdio server this process
starts; one with ``url`` (and ``headers``) a streamable-HTTP server (``"transport":
"sse"`` for the older SSE one). ``langchain-mcp-adapters`` turns each server tool into a
LangChain tool; :class:`McpTools` adds what the runtime needs to run it safely, read from
the tool's MCP annotations:

- ``readOnlyHint``: the call may overlap with others (it still runs every time: what a
  server reads changes without us, so no annotation makes a tool pure);
- not read-only and ``destructiveHint`` true or absent (MCP's default): dangerous, a
  person approves each call;
- ``idempotentHint``: a call a crash left unanswered may simply run again.

Annotations are what the server's author claims. A server's entry may say how far to
trust them with an ``approve`` key of ours (MCP clients ignore keys they do not know):

- ``"annotations"`` (the default): as above;
- ``"unless-read-only"``: every tool not annotated read-only asks a person, whatever its
  ``destructiveHint`` says (a git server's commit and checkout, marked not destructive);
- ``"all"``: every tool of the server asks.

A graph's ``approve`` list (or ``tool_spec(tool, dangerous=True)``) still asks a person
for any tool, and the approval request names the server a call goes to.

Each server keeps one session, opened when the tools are listed, on a loop of its own
that both faces hand their calls to, so a session is never bound to a caller's event
loop. A server that dies or stops answering makes that call's observation an error and is
reconnected at its next call. The sessions close when :class:`McpTools` is closed (``with``
/ ``async with`` bound them to a block) or, at the latest, when the process exits.

Examples:
    >>> import json, sys
    >>> servers = {"mcpServers": {"notes": {"command": sys.executable, "args": ["notes.py"]}}}
    >>> with McpTools(servers) as tools:  # doctest: +SKIP
    ...     graph = build_graph("local", tools=[*builtin_tools(), *tools])
    ...     graph.invoke({"messages": [("user", "What is 2+3?")]})
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, TypeVar, cast, overload

from reasoning_graphs.tools.spec import ToolSpec

try:
    from langchain_mcp_adapters.sessions import Connection, create_session
    from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.types import CallToolResult, Tool
except ImportError as exc:  # the optional extra is missing
    raise ImportError("MCP tools need the mcp extra: pip install 'reasoning-graphs[mcp]'") from exc

logger = logging.getLogger(__name__)

T = TypeVar("T")

CONNECT_SECONDS = 30.0
CLOSE_SECONDS = 10.0
PING_SECONDS = 2.0
MAX_TOOL_PAGES = 100

NOT_A_CONFIG = 'MCP servers must be given as {{"mcpServers": {{name: {{...}}}}}}; got {got}.'
BAD_SERVER = "MCP server {name!r}: {problem}."
UNREADABLE = "Cannot read the MCP servers file {path}: {error}"
CANNOT_CONNECT = "Cannot connect to the MCP server {name!r}: {error}"
SAME_NAME = "The MCP servers {first!r} and {second!r} both offer a tool named {tool!r}."
APPROVALS = ("annotations", "unless-read-only", "all")
"""The values of a server entry's ``approve`` key: which of its tools ask a person."""
WHERE = "on the MCP server {server!r}"
SERVER_FAILED = (
    "the MCP server {name!r} stopped answering ({error}); it is reconnected at the next call"
)


class McpConfigError(ValueError):
    """The servers file or mapping is not the ``mcpServers`` JSON MCP clients share."""


class McpServerError(RuntimeError):
    """A server could not be reached, or stopped answering during a call."""


def read_servers(source: str | Path | Mapping[str, Any]) -> dict[str, Connection]:
    """The connections named in ``source``: a ``{"mcpServers": ...}`` mapping or a JSON file.

    Examples:
        >>> read_servers({"mcpServers": {"web": {"url": "http://127.0.0.1:9000/mcp"}}})
        {'web': {'transport': 'streamable_http', 'url': 'http://127.0.0.1:9000/mcp'}}
    """
    return {name: _connection(name, entry) for name, entry in _entries(source).items()}


def _entries(source: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """The server entries of ``source``, by name, as written."""
    if isinstance(source, Mapping):
        config: Any = source
    else:
        try:
            config = json.loads(Path(source).read_text())
        except (OSError, ValueError) as exc:
            raise McpConfigError(UNREADABLE.format(path=source, error=exc)) from exc
    servers = config.get("mcpServers") if isinstance(config, Mapping) else None
    if not isinstance(servers, Mapping):
        raise McpConfigError(NOT_A_CONFIG.format(got=type(config).__name__))
    return {str(name): entry for name, entry in servers.items()}


def _approval(name: str, entry: Any) -> str:
    """The entry's ``approve`` setting (one of :data:`APPROVALS`)."""
    given = entry.get("approve", APPROVALS[0]) if isinstance(entry, Mapping) else APPROVALS[0]
    if given not in APPROVALS:
        choices = ", ".join(repr(choice) for choice in APPROVALS)
        problem = f"approve must be one of {choices}, not {given!r}"
        raise McpConfigError(BAD_SERVER.format(name=name, problem=problem))
    return str(given)


def _connection(name: str, entry: Any) -> Connection:
    def bad(problem: str) -> McpConfigError:
        return McpConfigError(BAD_SERVER.format(name=name, problem=problem))

    if not isinstance(entry, Mapping):
        raise bad("expected an object with a command or a url")
    if "command" in entry:
        args = entry.get("args", [])
        if not isinstance(entry["command"], str) or not _strings(args):
            raise bad("command must be a string and args a list of strings")
        stdio: dict[str, Any] = {
            "transport": "stdio",
            "command": entry["command"],
            "args": list(args),
        }
        for key in ("env", "cwd"):
            if entry.get(key) is not None:
                stdio[key] = entry[key]
        return cast(Connection, stdio)
    if isinstance(entry.get("url"), str):
        kind = entry.get("transport", entry.get("type", "streamable_http"))
        transport = "sse" if kind == "sse" else "streamable_http"
        http: dict[str, Any] = {"transport": transport, "url": entry["url"]}
        if entry.get("headers") is not None:
            http["headers"] = dict(entry["headers"])
        return cast(Connection, http)
    raise bad("expected a command (a stdio server) or a url (an HTTP server)")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def annotated_spec(
    tool: Any,
    hints: Mapping[str, Any] | None,
    approve: str = APPROVALS[0],
    server: str | None = None,
) -> ToolSpec:
    """``tool`` with the execution facts its MCP annotations (``hints``) state, asking a
    person as the server's ``approve`` setting says; a call of it reads as going to
    ``server``, when named."""
    hints = hints or {}
    read_only = hints.get("readOnlyHint") is True
    if approve == "all":
        dangerous = True
    elif approve == "unless-read-only":
        dangerous = not read_only
    else:
        dangerous = not read_only and hints.get("destructiveHint") is not False
    idempotent = read_only or hints.get("idempotentHint") is True
    where = None if server is None else _where(server)
    return ToolSpec(
        tool, dangerous=dangerous, concurrency_safe=read_only, idempotent=idempotent, where=where
    )


def _where(server: str) -> Callable[[Mapping[str, Any]], str]:
    shown = WHERE.format(server=server)
    return lambda args: shown


@dataclass
class _Link:
    """A live session and the task that holds it open (it ends when the connection does)."""

    session: ClientSession
    holder: asyncio.Task[None]
    stop: asyncio.Event


class _Server:
    """One server's session, kept open by a task on the servers' loop and opened again
    after the connection ends."""

    def __init__(self, name: str, connection: Connection, approve: str) -> None:
        self.name, self.connection, self.approve = name, connection, approve
        self._link: _Link | None = None
        self._lock: asyncio.Lock | None = None
        self._holders: set[asyncio.Task[None]] = set()

    async def link(self) -> _Link:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._link is None or self._link.holder.done():
                self._link = await self._open()
            return self._link

    async def tools(self) -> list[Tool]:
        session = (await self.link()).session
        try:
            return await asyncio.wait_for(_listed_tools(session), CONNECT_SECONDS)
        except (TimeoutError, asyncio.TimeoutError) as exc:
            error = f"it listed no tools within {CONNECT_SECONDS:g} s"
            raise McpServerError(CANNOT_CONNECT.format(name=self.name, error=error)) from exc

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, **_: Any
    ) -> CallToolResult:
        """What the adapter's tools call: the tool on this server's live session.

        The call fails as soon as the connection ends. An HTTP transport can leave a
        request waiting for good when the server dies mid-answer, so while a call waits
        the server is pinged now and then: a ping that cannot be sent ends the connection.
        """
        link = await self.link()
        call = asyncio.ensure_future(link.session.call_tool(name, arguments))
        pings = asyncio.ensure_future(_keep_pinging(link.session))
        try:
            await asyncio.wait({call, link.holder}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            pings.cancel()
            if not call.done():
                call.cancel()
        if call.done() and not call.cancelled() and call.exception() is None:
            return call.result()
        cause = call.exception() if call.done() and not call.cancelled() else None
        self._forget(link)
        failure = "the connection ended" if cause is None else _reason(cause)
        raise McpServerError(SERVER_FAILED.format(name=self.name, error=failure)) from cause

    async def close(self) -> None:
        if self._link is not None:
            self._link.stop.set()
        self._link = self._lock = None  # the next loop makes its own
        if self._holders:
            await asyncio.wait(self._holders, timeout=CLOSE_SECONDS)

    async def _open(self) -> _Link:
        ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()
        holder = asyncio.create_task(self._hold(ready, stop))
        self._holders.add(holder)
        holder.add_done_callback(self._holders.discard)
        try:
            session = await asyncio.wait_for(asyncio.shield(ready), CONNECT_SECONDS)
        except BaseException as exc:
            stop.set()
            holder.cancel()
            error = f"no answer within {CONNECT_SECONDS:g} s" if _timed_out(exc) else _reason(exc)
            raise McpServerError(CANNOT_CONNECT.format(name=self.name, error=error)) from exc
        return _Link(session, holder, stop)

    async def _hold(self, ready: asyncio.Future[ClientSession], stop: asyncio.Event) -> None:
        """Open the session, hand it over, and keep it until ``stop``: a session must be
        entered and left by one task."""
        try:
            async with _session(self.name, self.connection) as session:
                await session.initialize()
                ready.set_result(session)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else McpServerError(exc))
            else:
                logger.debug("MCP server %s closed with %r", self.name, exc)
            if not isinstance(exc, Exception):
                raise

    def _forget(self, link: _Link) -> None:
        link.stop.set()
        if self._link is link:
            self._link = None


async def _listed_tools(session: ClientSession) -> list[Tool]:
    found: list[Tool] = []
    cursor: str | None = None
    for _ in range(MAX_TOOL_PAGES):
        page = await session.list_tools(cursor) if cursor else await session.list_tools()
        found.extend(page.tools)
        cursor = page.nextCursor
        if not cursor:
            break
    return found


@asynccontextmanager
async def _session(name: str, connection: Connection) -> AsyncIterator[ClientSession]:
    """A session on ``connection``; a stdio server's stderr becomes log records of ours
    (:func:`_server_log`)."""
    if connection["transport"] != "stdio":
        async with create_session(connection) as session:
            yield session
        return
    stdio = cast(dict[str, Any], connection)
    server = StdioServerParameters(
        command=stdio["command"], args=stdio["args"], env=stdio.get("env"), cwd=stdio.get("cwd")
    )
    errors = _server_log(name)
    try:
        async with (
            stdio_client(server, errlog=errors) as (read, write),
            ClientSession(read, write) as session,
        ):
            yield session
    finally:
        errors.close()  # the server's own copy ends with it, and the reader with both


def _server_log(name: str) -> TextIO:
    """A pipe for a stdio server's stderr whose every line becomes an INFO record of this
    module's logger: a server's own messages ("Processing request of type …") never land
    in the middle of a person's screen, and ``--log-level info`` (or Python's logging)
    shows them. The SDK would otherwise write them to ``sys.stderr``."""
    read_end, write_end = os.pipe()

    def forward() -> None:
        with open(read_end, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                logger.info("MCP server %s: %s", name, line.rstrip())

    threading.Thread(target=forward, name=f"mcp-{name}-stderr", daemon=True).start()
    return open(write_end, "w", encoding="utf-8")


async def _keep_pinging(session: ClientSession) -> None:
    """Ping every :data:`PING_SECONDS`; an unanswered ping is no failure (a busy server may
    answer late), a ping the transport cannot send ends the session's connection."""
    while True:
        await asyncio.sleep(PING_SECONDS)
        try:
            await asyncio.wait_for(session.send_ping(), PING_SECONDS)
        except Exception as exc:
            logger.debug("an MCP ping went unanswered: %r", exc)


def _reason(exc: BaseException) -> str:
    """What went wrong, in one line: the first error inside task-group wrappers."""
    while isinstance(inner := getattr(exc, "exceptions", None), tuple) and inner:
        exc = inner[0]
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _timed_out(exc: BaseException) -> bool:
    return isinstance(exc, (TimeoutError, asyncio.TimeoutError))


class McpTools(Sequence[ToolSpec]):
    """The tools of the MCP servers in ``servers``, each a :class:`ToolSpec` with the facts
    its annotations state; connected on first use (``with``, ``async with``, :meth:`open`
    or :meth:`aopen`) and closed by :meth:`close` / :meth:`aclose` or at process exit.

    Args:
        servers: ``{"mcpServers": {...}}`` or the path of a JSON file holding it.
    """

    def __init__(self, servers: str | Path | Mapping[str, Any]) -> None:
        self._servers = [
            _Server(name, _connection(name, entry), _approval(name, entry))
            for name, entry in _entries(servers).items()
        ]
        self._specs: list[ToolSpec] | None = None
        self._offered: dict[str, str] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._guard = threading.RLock()

    def open(self) -> McpTools:
        """Connect to every server and list its tools (blocks; see :meth:`aopen`). A server
        that cannot be reached closes the others again and raises :class:`McpServerError`."""
        with self._guard:
            if self._specs is None:
                try:
                    self._specs = self._submit(self._list()).result()
                except BaseException:
                    self.close()
                    raise
        return self

    async def aopen(self) -> McpTools:
        """:meth:`open` without blocking the caller's event loop."""
        return await asyncio.to_thread(self.open)

    def close(self) -> None:
        """Close every session (a stdio server's process ends with it); a later call opens
        its server again."""
        with self._guard:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
            if loop is None or thread is None:
                return
            atexit.unregister(self.close)
            closing = asyncio.run_coroutine_threadsafe(self._close_all(), loop)
            try:
                closing.result(CLOSE_SECONDS + 1)
            except Exception as exc:  # a close that fails must not hide the caller's result
                logger.debug("closing MCP sessions failed: %r", exc)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(CLOSE_SECONDS)
            if not thread.is_alive():
                loop.close()

    async def aclose(self) -> None:
        """:meth:`close` without blocking the caller's event loop."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> McpTools:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> McpTools:
        return await self.aopen()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @overload
    def __getitem__(self, index: int) -> ToolSpec: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ToolSpec]: ...

    def __getitem__(self, index: int | slice) -> ToolSpec | Sequence[ToolSpec]:
        return self._listed()[index]

    def __len__(self) -> int:
        return len(self._listed())

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self._listed())

    def server_of(self, tool: str) -> str | None:
        """The name of the server that offers ``tool`` (connecting first), if one does."""
        self.open()
        return self._offered.get(tool)

    def _listed(self) -> list[ToolSpec]:
        return self.open()._specs or []

    async def _list(self) -> list[ToolSpec]:
        specs: list[ToolSpec] = []
        offered: dict[str, str] = {}
        for server in self._servers:
            for tool in await server.tools():
                if tool.name in offered:
                    first = offered[tool.name]
                    raise McpConfigError(
                        SAME_NAME.format(first=first, second=server.name, tool=tool.name)
                    )
                offered[tool.name] = server.name
                specs.append(self._spec(server, tool))
        self._offered = offered
        return specs

    def _spec(self, server: _Server, tool: Tool) -> ToolSpec:
        remote = _Remote(self, server)
        converted = convert_mcp_tool_to_langchain_tool(
            cast(ClientSession, remote), tool, server_name=server.name
        )
        hints = tool.annotations.model_dump() if tool.annotations is not None else None
        return annotated_spec(converted, hints, server.approve, server.name)

    async def _close_all(self) -> None:
        await asyncio.gather(*(server.close() for server in self._servers))

    def _submit(self, work: Coroutine[Any, Any, T]) -> Future[T]:
        """Run ``work`` on the servers' own loop, started (again, after a close) in a
        daemon thread on first use."""
        with self._guard:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="mcp", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
                atexit.register(self.close)
            return asyncio.run_coroutine_threadsafe(work, self._loop)


class _Remote:
    """The session the adapter's tools see: each call handed to the servers' own loop, so
    the sync face (on a private loop) and the async face (on the caller's) share one
    session, and a call after :meth:`McpTools.close` opens it again."""

    def __init__(self, owner: McpTools, server: _Server) -> None:
        self._owner, self._server = owner, server

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, **_: Any
    ) -> CallToolResult:
        work = self._server.call_tool(name, arguments)
        return await asyncio.wrap_future(self._owner._submit(work))
