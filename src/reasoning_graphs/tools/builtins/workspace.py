"""Where the file and shell tools work: one folder, or a folder of its own for each thread.

A process that serves many threads (``langgraph dev``, LangGraph Server) must not
let one thread read or overwrite what another wrote, nor write into the folder
the server happens to run in (often a project checkout). So the server's graphs
work in :class:`ThreadFolders`: a root the deployer chooses, with one folder per
thread, named after the thread id and created when a call first needs it. No
run option names a folder, and a file path still cannot leave its thread's folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from platformdirs import user_data_dir

WORKSPACE_ENV = "REASONING_GRAPHS_WORKSPACE"
NO_THREAD = "no-thread"
"""The folder of calls made outside a thread (a graph run with no checkpointer)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class ThreadFolders:
    """A root folder in which each thread works in a folder of its own."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser().resolve()

    def path(self) -> Path:
        """The current thread's folder (found from the run's config), not created."""
        return self.root / folder_name(_thread_id())

    def ready(self) -> Path:
        """The current thread's folder, created if it is not there yet."""
        folder = self.path()
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def __repr__(self) -> str:
        return f"ThreadFolders({str(self.root)!r})"


Workspace = str | Path | ThreadFolders
"""A workspace: a fixed folder, or a folder per thread."""


def server_root() -> Path:
    """The root of the server graphs' thread folders: ``$REASONING_GRAPHS_WORKSPACE``, else a
    ``workspaces`` folder in the user's data directory (never the server's working folder)."""
    chosen = os.environ.get(WORKSPACE_ENV)
    return Path(chosen) if chosen else Path(user_data_dir("reasoning-graphs")) / "workspaces"


def folder_name(thread_id: str) -> str:
    """A thread id as one safe folder name: no separators, no ``..``, bounded length."""
    name = _UNSAFE.sub("_", thread_id).lstrip(".")[:120]
    return name or "_"


def locator(workspace: Workspace) -> tuple[Callable[[], Path], Callable[[], Path]]:
    """How a tool finds its folder when a call runs (created if needed), and how an
    approval prompt names it (without touching the disk)."""
    if isinstance(workspace, ThreadFolders):
        return workspace.ready, workspace.path
    fixed = Path(workspace).expanduser().resolve()
    return (lambda: fixed), (lambda: fixed)


def _thread_id() -> str:
    from langgraph.config import get_config

    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # outside a run
        return NO_THREAD
    return str(configurable.get("thread_id") or NO_THREAD)
