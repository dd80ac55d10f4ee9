"""Where the file and shell tools work: one folder, or a folder of its own for each thread.

A process that serves many threads (``langgraph dev``, LangGraph Server) must not
let one thread read or overwrite what another wrote, nor write into the folder
the server happens to run in (often a project checkout). So the server's graphs
work in :class:`ThreadFolders`: a root the deployer chooses, with one folder per
thread, named after the thread id and created when a call first needs it. No
run option names a folder, and a file path still cannot leave its thread's folder.

A client chooses the thread id, so two ids must never share a folder: ids that
look alike once made safe (``a/b`` and ``a b``), or differ only in case on a
case-insensitive file system, or only past a length cut. :func:`folder_name`
is therefore injective, and its names are plain ASCII single path components.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from platformdirs import user_data_dir

from reasoning_graphs.thread_ids import thread_digest

WORKSPACE_ENV = "REASONING_GRAPHS_WORKSPACE"
NO_THREAD = "@no-thread"
"""The folder of calls made outside a thread (a graph run with no checkpointer); no
thread's folder name holds an ``@``, so no thread id leads here."""
_PLAIN_ID = re.compile(r"[a-z0-9_-]{1,64}")
"""Ids that are their own folder name (server thread ids are UUIDs): lower case, so
no two differ only in case, and without the dot that every other name holds."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_READABLE_LENGTH = 40
_DIGEST_LENGTH = 32
"""Hex digits of the id's SHA-256 kept: 128 bits, so two ids with one digest take a
2**64 search to find, and an id matching a given thread's digest far more."""


class ThreadFolders:
    """A root folder in which each thread works in a folder of its own."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser().resolve()

    def path(self) -> Path:
        """The current thread's folder (found from the run's config), not created."""
        thread_id = _thread_id()
        return self.root / (NO_THREAD if thread_id is None else folder_name(thread_id))

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
    """A thread id as one safe folder name, different for every id (case aside).

    A plain id (lower-case letters, digits, ``_`` and ``-``; at most 64) is its own
    name. Any other id becomes a readable part (``_`` for every run of other
    characters, no leading dot, at most 40 characters) and, after a dot, a digest of
    the exact id in lower-case hex: ``alice_example.com.3f0c…``. So a name has no
    separator, NUL or ``..``, is ASCII and at most 73 characters long.

    Examples:
        >>> folder_name("6f1c2a3e-9b7d-4c52-8e0f-1a2b3c4d5e6f")
        '6f1c2a3e-9b7d-4c52-8e0f-1a2b3c4d5e6f'
        >>> folder_name("a/b")[:4], folder_name("a b")[:4], folder_name("a/b") == folder_name("a b")
        ('a_b.', 'a_b.', False)
    """
    if _PLAIN_ID.fullmatch(thread_id):
        return thread_id
    readable = _UNSAFE.sub("_", thread_id).lstrip(".")[:_READABLE_LENGTH] or "_"
    return f"{readable}.{thread_digest(thread_id)[:_DIGEST_LENGTH]}"


def locator(workspace: Workspace) -> tuple[Callable[[], Path], Callable[[], Path]]:
    """How a tool finds its folder when a call runs (created if needed), and how an
    approval prompt names it (without touching the disk)."""
    if isinstance(workspace, ThreadFolders):
        return workspace.ready, workspace.path
    fixed = Path(workspace).expanduser().resolve()
    return (lambda: fixed), (lambda: fixed)


def _thread_id() -> str | None:
    from langgraph.config import get_config

    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # outside a run
        return None
    thread_id = configurable.get("thread_id")
    return None if thread_id is None else str(thread_id)
