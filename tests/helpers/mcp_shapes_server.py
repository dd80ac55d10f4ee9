"""Stand-ins for two MCP servers nobody here wrote, with their tools' names and annotations.

Usage: ``python mcp_shapes_server.py LOG fs|git``. Every tool that runs appends one line
(``name args``) to ``LOG``. The tools keep the shapes the published servers give them:

- ``fs``, as ``@modelcontextprotocol/server-filesystem`` (npm): ``read_file`` and
  ``list_directory`` read-only, ``write_file`` not read-only and destructive; its
  ``read_file``/``write_file`` share their names with the command line's built-in tools;
- ``git``, as ``mcp-server-git`` (PyPI): ``git_status`` and ``git_log`` read-only;
  ``git_add``, ``git_commit`` and ``git_checkout`` not read-only yet marked not
  destructive, so a client that follows the annotations runs them unasked. Like the
  published server, it logs each request on its stderr ("Processing request of type …").
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(readOnlyHint=True)
DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True)
NOT_DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=False)


def serve(log: Path, kind: str) -> None:
    server = FastMCP(kind, log_level="INFO" if kind == "git" else "WARNING")

    def ran(line: str) -> None:
        with log.open("a") as out:
            out.write(line + "\n")

    if kind == "fs":

        @server.tool(annotations=READ_ONLY)
        def read_file(path: str) -> str:
            """Read a file from the allowed folders."""
            ran(f"read_file {path}")
            return f"contents of {path} (from the fs server)"

        @server.tool(annotations=DESTRUCTIVE)
        def write_file(path: str, content: str) -> str:
            """Write a file in the allowed folders, replacing it."""
            ran(f"write_file {path}")
            return f"wrote {path}"

        @server.tool(annotations=READ_ONLY)
        def list_directory(path: str) -> str:
            """List a folder."""
            ran(f"list_directory {path}")
            return "[FILE] a.txt"

    else:

        @server.tool(annotations=READ_ONLY)
        def git_status(repo_path: str) -> str:
            """Show the working tree status."""
            ran(f"git_status {repo_path}")
            return "nothing to commit"

        @server.tool(annotations=READ_ONLY)
        def git_log(repo_path: str) -> str:
            """Show the commit log."""
            ran(f"git_log {repo_path}")
            return "abc123 first"

        @server.tool(annotations=NOT_DESTRUCTIVE)
        def git_add(repo_path: str, files: list[str]) -> str:
            """Add file contents to the staging area."""
            ran(f"git_add {repo_path} {' '.join(files)}")
            return "staged"

        @server.tool(annotations=NOT_DESTRUCTIVE)
        def git_commit(repo_path: str, message: str) -> str:
            """Record changes to the repository."""
            ran(f"git_commit {repo_path} {message}")
            return "committed"

        @server.tool(annotations=NOT_DESTRUCTIVE)
        def git_checkout(repo_path: str, branch_name: str) -> str:
            """Switch branches."""
            ran(f"git_checkout {repo_path} {branch_name}")
            return f"on {branch_name}"

    server.run("stdio")


if __name__ == "__main__":
    serve(Path(sys.argv[1]), sys.argv[2])
