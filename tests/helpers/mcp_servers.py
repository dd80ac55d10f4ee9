"""The test MCP server (:mod:`mcp_notes_server`) as a client names it, over stdio or HTTP.

``stdio_servers(log)`` is the ``mcpServers`` JSON for a stdio server this process
starts; :func:`http_server` starts one on a free loopback port and yields its JSON.
:class:`NotesLog` reads what the server wrote: which tools ran and which processes
started.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.helpers import HELPERS
from tests.helpers.openai_server import free_port

SERVER = HELPERS / "mcp_notes_server.py"
STARTUP_TIMEOUT = 30.0


class NotesLog:
    """The lines the server appended to its log file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def lines(self) -> list[str]:
        return self.path.read_text().splitlines() if self.path.exists() else []

    def ran(self, line: str) -> int:
        """How many times the tool call ``line`` (``"add 2 3"``) ran."""
        return self.lines().count(line)

    def pids(self) -> list[int]:
        """The server processes that started, in order."""
        return [int(line.split()[1]) for line in self.lines() if line.startswith("started ")]


def stdio_servers(log: Path, name: str = "notes") -> dict[str, Any]:
    return {"mcpServers": {name: {"command": sys.executable, "args": [str(SERVER), str(log)]}}}


@contextmanager
def http_server(log: Path) -> Iterator[dict[str, Any]]:
    """A streamable-HTTP server on a free loopback port while the block runs."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER), str(log), "--http", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_for_port(port, process)
        yield {"mcpServers": {"notes": {"url": f"http://127.0.0.1:{port}/mcp"}}}
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=10)


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the MCP test server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the MCP test server did not listen on {port}")


def gone(pid: int, timeout: float = 10.0) -> bool:
    """Whether process ``pid`` has ended (waiting up to ``timeout`` for it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False
