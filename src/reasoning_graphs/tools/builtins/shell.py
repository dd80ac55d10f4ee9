"""Run a shell command in the workspace and report exit code, stdout and stderr.

The command runs in a new session, so it and everything it starts share one
process group; when the call ends, on time or not, the whole group is killed.
``subprocess.run(timeout=...)`` would kill only the shell and leave ``sleep 5``
or a server it started running (and holding the output pipes open), which is
why the process is driven by hand here. Output is read by two threads that keep
at most :data:`MAX_OUTPUT_BYTES` per stream, so ``yes`` cannot fill the memory.
The group is registered in :mod:`~reasoning_graphs.tools.process_groups` while it
runs, so a process that exits without waiting for the call kills it too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import IO, Annotated

from pydantic import Field

from reasoning_graphs.tools import process_groups
from reasoning_graphs.tools.builtins.workspace import Workspace, locator
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

DEFAULT_TIMEOUT_SECONDS = 20.0
TIMEOUT_MARGIN_SECONDS = 5.0
"""The runtime's own timeout waits this much longer, so the command's timeout fires first."""
MAX_OUTPUT_BYTES = 100_000
DRAIN_SECONDS = 2.0
"""How long to wait for output after the group is killed (a daemon may have escaped it)."""

DESCRIPTION = (
    "Run a shell command (/bin/sh) in the workspace folder and return its exit code, "
    "stdout and stderr. Use it to list, search, build or test files there. It has "
    "no input and a {timeout:g} s time limit; processes it starts are killed when it "
    "ends, so do not start servers. Not for arithmetic or plain file reading and "
    "writing when the dedicated tools can do it; a person may have to approve each command."
)
COMMAND_HELP = "The command line, e.g. 'ls -la' or 'grep -rn TODO src'."

WORKSPACE_MISSING = "The workspace folder {workspace} does not exist."
EMPTY_COMMAND = "The command is empty: pass a shell command such as 'ls'."
RESULT = "exit code: {code}\nstdout:\n{stdout}\nstderr:\n{stderr}"
TIMED_OUT = (
    "Timed out after {seconds:g} s: the command and every process it started were "
    "killed. Output so far follows.\n"
)
NO_OUTPUT = "(none)"
KILLED = "none, killed"
OUTPUT_CUT = "\n[... {dropped} more bytes not kept ...]"


class _Capture:
    """Drain one pipe in a thread, keeping its first bytes and counting the rest."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._kept = bytearray()
        self._dropped = 0
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        with self._stream:
            while chunk := os.read(self._stream.fileno(), 65536):
                room = MAX_OUTPUT_BYTES - len(self._kept)
                self._kept += chunk[:room]
                self._dropped += max(len(chunk) - room, 0)

    def text(self, wait: float) -> str:
        """What was read within ``wait`` more seconds, decoded."""
        self._thread.join(wait)
        text = bytes(self._kept).decode("utf-8", errors="replace").rstrip("\n")
        if self._dropped:
            text += OUTPUT_CUT.format(dropped=self._dropped)
        return text or NO_OUTPUT


def run_command(command: str, cwd: Path, timeout: float) -> str:
    """Run ``command`` with ``/bin/sh`` in ``cwd`` and describe what happened.

    Args:
        command: The shell command line.
        cwd: Working directory.
        timeout: Seconds before the process group is killed.

    Returns:
        Exit code, stdout and stderr; after a timeout, a note saying so first.
    """
    process = subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    process_groups.started(process.pid)
    assert process.stdout is not None  # both are pipes, never None
    assert process.stderr is not None
    stdout, stderr = _Capture(process.stdout), _Capture(process.stderr)
    try:
        code: int | None = process.wait(timeout)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        # Also after a normal exit: background children must not outlive the call.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        process_groups.ended(process.pid)
    result = RESULT.format(
        code=KILLED if code is None else code,
        stdout=stdout.text(DRAIN_SECONDS),
        stderr=stderr.text(DRAIN_SECONDS),
    )
    return result if code is not None else TIMED_OUT.format(seconds=timeout) + result


def shell(workspace: Workspace, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> ToolSpec:
    """The ``shell`` tool, run in ``workspace``; it can do anything, so it is dangerous."""
    folder, shown = locator(workspace)

    def run(command: Annotated[str, Field(description=COMMAND_HELP)]) -> str:
        """Run one command line in the workspace."""
        if not command.strip():
            raise ValueError(EMPTY_COMMAND)
        root = folder()
        if not root.is_dir():
            raise ValueError(WORKSPACE_MISSING.format(workspace=root))
        return run_command(command, root, timeout)

    return tool_spec(
        run,
        name="shell",
        description=DESCRIPTION.format(timeout=timeout),
        dangerous=True,
        concurrency_safe=False,
        timeout=timeout + TIMEOUT_MARGIN_SECONDS,
        where=lambda args: f"in {shown()}",
    )
