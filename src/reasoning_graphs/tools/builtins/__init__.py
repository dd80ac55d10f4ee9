"""Tools that come with the package, and the default set a run starts with.

Each factory returns a fresh :class:`~reasoning_graphs.tools.spec.ToolSpec`;
the ones that touch files or run commands are bound to a workspace when they
are made: one folder, or (for the server's graphs, :func:`server_tools`) a
folder per thread inside a root, so one process can serve several workspaces.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from reasoning_graphs.tools.builtins.calculator import calculator
from reasoning_graphs.tools.builtins.files import read_file, write_file
from reasoning_graphs.tools.builtins.observations import read_observation
from reasoning_graphs.tools.builtins.search_docs import search_docs
from reasoning_graphs.tools.builtins.shell import shell
from reasoning_graphs.tools.builtins.workspace import (
    WORKSPACE_ENV,
    ThreadFolders,
    Workspace,
    server_root,
)
from reasoning_graphs.tools.spec import ToolSpec

DOCS_ENV = "REASONING_GRAPHS_DOCS"
MCP_ENV = "REASONING_GRAPHS_MCP"
"""Names a JSON file of MCP servers whose tools the server's graphs get too."""

__all__ = [
    "DOCS_ENV",
    "MCP_ENV",
    "WORKSPACE_ENV",
    "ThreadFolders",
    "calculator",
    "default_tools",
    "read_file",
    "read_observation",
    "search_docs",
    "server_tools",
    "shell",
    "workspace_folder",
    "write_file",
]


def workspace_folder(workspace: str | Path | None = None) -> Path:
    """The folder file and shell tools work in.

    Args:
        workspace: An explicit folder; when ``None``, the environment variable
            ``REASONING_GRAPHS_WORKSPACE``, else the current directory.
    """
    chosen = workspace if workspace is not None else os.environ.get(WORKSPACE_ENV) or Path.cwd()
    return Path(chosen).expanduser().resolve()


def default_tools(
    workspace: Workspace | None = None, docs: str | Path | None = None
) -> list[ToolSpec]:
    """The built-in tools, bound to one workspace.

    ``search_docs`` joins only when there is a documents folder to search: a
    tool that can only fail is noise in the prompt, and small models pick it.

    Args:
        workspace: Folder for ``read_file``, ``write_file`` and ``shell``
            (see :func:`workspace_folder` for the default), or
            :class:`ThreadFolders` for a folder per thread.
        docs: Folder ``search_docs`` searches; when ``None``, the environment
            variable ``REASONING_GRAPHS_DOCS``, else no ``search_docs``.

    Returns:
        calculator, read_file, write_file, shell, search_docs (with a docs
        folder) and read_observation.
    """
    root = workspace if isinstance(workspace, ThreadFolders) else workspace_folder(workspace)
    docs = docs if docs is not None else os.environ.get(DOCS_ENV) or None
    tools = [calculator(), read_file(root), write_file(root), shell(root)]
    if docs is not None:
        tools.append(search_docs(docs))
    tools.append(read_observation())
    return tools


def server_tools() -> list[ToolSpec]:
    """The tools of the graphs ``langgraph.json`` names: the built-in ones, each thread
    working in a folder of its own inside :func:`~.workspace.server_root` (``search_docs``
    searches ``$REASONING_GRAPHS_DOCS`` when it is set), and the tools of the MCP servers
    ``$REASONING_GRAPHS_MCP`` names, one session per server for the whole process."""
    servers = os.environ.get(MCP_ENV)
    return [
        *default_tools(ThreadFolders(server_root())),
        *(_served_mcp(servers) if servers else []),
    ]


@functools.cache
def _served_mcp(servers: str) -> tuple[ToolSpec, ...]:
    from reasoning_graphs.tools.mcp import McpTools  # the optional mcp extra

    return tuple(McpTools(servers).open())
