"""Read and write files inside one workspace folder, and nowhere else.

Every path is resolved, symlinks included, before it is used, and refused unless
the result lies inside the workspace: a model that writes ``../../etc/passwd``,
an absolute path or a symlink pointing out gets an error it can act on, not
access. (A symlink swapped in between the check and the open is not guarded
against; the workspace is assumed not to be shared with an attacker.)

Only regular files are read or written: opening a named pipe blocks until the
other end opens it, and a socket or device is no text file. What was opened is
checked on the open descriptor, so nothing can be swapped in between.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from reasoning_graphs.tools.builtins.workspace import Workspace, locator
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

MAX_READ_BYTES = 200_000
"""Enough for any source file; longer files are cut and say so."""
MAX_WRITE_CHARS = 1_000_000

READ_DESCRIPTION = (
    "Read a text file from the workspace and return its contents. Paths are "
    "relative to the workspace folder; files outside it cannot be read. Use it to "
    "look at a file you know exists; to list or search files use other tools."
)
WRITE_DESCRIPTION = (
    "Write text to a file in the workspace, replacing the file if it exists and "
    "creating missing folders. Paths are relative to the workspace folder; files "
    "outside it cannot be written. Use it to save results or edit files; a person "
    "may have to approve each write. Not for reading or for appending."
)
PATH_HELP = "File path relative to the workspace, e.g. 'notes/todo.md'."
CONTENT_HELP = "The complete new text of the file."

WORKSPACE_MISSING = "The workspace folder {workspace} does not exist."
OUTSIDE_WORKSPACE = (
    "Refused: {path!r} resolves to {resolved}, outside the workspace {workspace}. "
    "Use a path relative to the workspace that stays inside it."
)
NOT_FOUND = "There is no file {path!r} in the workspace."
IS_A_DIRECTORY = "{path!r} is a folder, not a file."
NOT_A_REGULAR_FILE = (
    "Refused: {path!r} is not a regular file but a named pipe, socket or device; "
    "only regular files can be read or written."
)
BINARY_FILE = "{path!r} looks like a binary file ({size} bytes); only text files can be read."
READ_CUT = "\n[... file is {size} bytes; only the first {limit} were read ...]"
CONTENT_TOO_LONG = "The content has {length} characters; at most {limit} can be written at once."
WROTE = "Wrote {size} bytes to {path}."


def resolve_inside(workspace: Path, path: str) -> Path:
    """Resolve ``path`` against ``workspace`` and refuse anything that leaves it.

    Args:
        workspace: The already resolved workspace folder.
        path: What the model asked for: relative, or absolute but inside.

    Returns:
        The resolved absolute path, symlinks followed.

    Raises:
        ValueError: The workspace is missing or the path lies outside it.
    """
    if not workspace.is_dir():
        raise ValueError(WORKSPACE_MISSING.format(workspace=workspace))
    resolved = (workspace / Path(path).expanduser()).resolve()
    if not resolved.is_relative_to(workspace):
        raise ValueError(
            OUTSIDE_WORKSPACE.format(path=path, resolved=resolved, workspace=workspace)
        )
    return resolved


def _open_regular(target: Path, flags: int, path: str) -> int:
    """Open ``target`` and return its descriptor, refusing anything but a regular file.

    ``O_NONBLOCK`` makes opening a named pipe return at once (for writing with no
    reader it fails with ENXIO, as does a socket); ``fstat`` on the descriptor
    then checks what was really opened. Truncate after this check, not with
    ``O_TRUNC``, so that nothing but a regular file is ever changed.

    Args:
        target: The resolved path.
        flags: ``os.O_RDONLY`` or ``os.O_WRONLY | os.O_CREAT`` (a new file
            gets mode 0o666 less the umask, as with ``open``).
        path: What the model asked for, for the messages.

    Raises:
        ValueError: There is no such file, or it is a folder, pipe, socket or device.
    """
    try:
        fd = os.open(target, flags | os.O_NONBLOCK | os.O_NOCTTY, 0o666)
    except (FileNotFoundError, NotADirectoryError):
        raise ValueError(NOT_FOUND.format(path=path)) from None
    except IsADirectoryError:
        raise ValueError(IS_A_DIRECTORY.format(path=path)) from None
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            raise
        raise ValueError(NOT_A_REGULAR_FILE.format(path=path)) from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        os.set_blocking(fd, True)
        return fd
    os.close(fd)
    if stat.S_ISDIR(mode):
        raise ValueError(IS_A_DIRECTORY.format(path=path))
    raise ValueError(NOT_A_REGULAR_FILE.format(path=path))


def read_file(workspace: Workspace) -> ToolSpec:
    """The ``read_file`` tool, confined to ``workspace``; read-only, so concurrency-safe."""
    folder, shown = locator(workspace)

    def run(path: Annotated[str, Field(description=PATH_HELP)]) -> str:
        """Return the text of one workspace file, cut at :data:`MAX_READ_BYTES`."""
        target = resolve_inside(folder(), path)
        with os.fdopen(_open_regular(target, os.O_RDONLY, path), "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            data = handle.read(MAX_READ_BYTES)
        if b"\0" in data:
            raise ValueError(BINARY_FILE.format(path=path, size=size))
        text = data.decode("utf-8", errors="replace")
        if size > MAX_READ_BYTES:
            text += READ_CUT.format(size=size, limit=MAX_READ_BYTES)
        return text

    return tool_spec(
        run,
        name="read_file",
        description=READ_DESCRIPTION,
        concurrency_safe=True,
        where=_file_in(shown),
    )


def write_file(workspace: Workspace) -> ToolSpec:
    """The ``write_file`` tool, confined to ``workspace``; it changes files, so it is dangerous."""
    folder, shown = locator(workspace)

    def run(
        path: Annotated[str, Field(description=PATH_HELP)],
        content: Annotated[str, Field(description=CONTENT_HELP)],
    ) -> str:
        """Replace one workspace file with ``content`` (UTF-8)."""
        if len(content) > MAX_WRITE_CHARS:
            raise ValueError(CONTENT_TOO_LONG.format(length=len(content), limit=MAX_WRITE_CHARS))
        root = folder()
        target = resolve_inside(root, path)
        data = content.encode("utf-8")
        target.parent.mkdir(parents=True, exist_ok=True)
        with os.fdopen(_open_regular(target, os.O_WRONLY | os.O_CREAT, path), "wb") as handle:
            handle.truncate()
            handle.write(data)
        return WROTE.format(size=len(data), path=target.relative_to(root).as_posix())

    return tool_spec(
        run,
        name="write_file",
        description=WRITE_DESCRIPTION,
        dangerous=True,
        concurrency_safe=False,
        where=_file_in(shown),
    )


def _file_in(shown: Callable[[], Path]) -> Callable[[Mapping[str, Any]], str]:
    """Where a file call acts: its path made absolute in the workspace, without touching the
    disk (the call itself still refuses a path that leaves the workspace)."""

    def where(args: Mapping[str, Any]) -> str:
        root, path = shown(), args.get("path")
        target = os.path.normpath(root / str(path)) if isinstance(path, str) and path else root
        return f"at {target}"

    return where
