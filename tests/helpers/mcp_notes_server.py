"""An MCP server written for the tests with the ``mcp`` SDK, over stdio or streamable HTTP.

Usage: ``python mcp_notes_server.py LOG [--http PORT]``. The server appends
``started PID`` to ``LOG`` when it starts and every tool that runs one line (``name
args``), so a test can tell what ran, how often, and which process ran it. Its tools
cover what a client must handle:

- ``add``: read-only arithmetic (``readOnlyHint``);
- ``delete_note``: destructive (``destructiveHint``), so a person must approve it;
- ``save_note``: stateful, not destructive, safe to repeat (``idempotentHint``);
- ``note_count``: no annotations at all, which MCP reads as possibly destructive;
- ``broken``: answers every call with a tool error (``isError``);
- ``nap``: read-only, sleeps as long as asked (a slow server);
- ``build_status``: read-only, yet its answer changes from call to call: a CI build
  that is ``running`` for its first two checks and ``passed`` after (counted in ``LOG``);
- ``crash``: ends the server process mid-call (a server that dies).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(readOnlyHint=True)
DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True)
IDEMPOTENT = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True)


def serve(log: Path, port: int | None) -> None:
    server = FastMCP("notes", host="127.0.0.1", port=port or 8000, log_level="WARNING")

    def ran(line: str) -> None:
        with log.open("a") as out:
            out.write(line + "\n")

    @server.tool(annotations=READ_ONLY)
    def add(a: int, b: int) -> int:
        """Add two integers."""
        ran(f"add {a} {b}")
        return a + b

    @server.tool(annotations=DESTRUCTIVE)
    def delete_note(title: str) -> str:
        """Delete the note called ``title`` for good."""
        ran(f"delete_note {title}")
        return f"deleted {title}"

    @server.tool(annotations=IDEMPOTENT)
    def save_note(title: str, text: str) -> str:
        """Save ``text`` as the note ``title`` (saving it twice changes nothing more)."""
        ran(f"save_note {title}")
        return f"saved {title}"

    @server.tool()
    def note_count() -> int:
        """How many notes there are."""
        ran("note_count")
        return 3

    @server.tool(annotations=READ_ONLY)
    def broken(reason: str) -> str:
        """Always fails."""
        ran(f"broken {reason}")
        raise ValueError(f"the notes index is corrupt ({reason})")

    @server.tool(annotations=READ_ONLY)
    async def nap(seconds: float) -> str:
        """Sleep for ``seconds``, then say so."""
        ran(f"nap {seconds:g}")
        await asyncio.sleep(seconds)
        return f"slept {seconds:g} s"

    @server.tool(annotations=READ_ONLY)
    def build_status(build_id: str) -> str:
        """The status of CI build ``build_id``: running, then passed."""
        line = f"build_status {build_id}"
        ran(line)
        checks = log.read_text().splitlines().count(line)
        return "running" if checks <= 2 else "passed"

    @server.tool(annotations=READ_ONLY)
    def crash() -> str:
        """End the server process without answering."""
        ran("crash")
        os._exit(3)

    ran(f"started {os.getpid()}")
    server.run("streamable-http" if port else "stdio")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("log", type=Path)
    parser.add_argument("--http", type=int, default=None, metavar="PORT")
    options = parser.parse_args()
    serve(options.log, options.http)


if __name__ == "__main__":
    main()
