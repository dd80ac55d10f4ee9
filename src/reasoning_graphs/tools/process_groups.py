"""Process groups that tool calls started, so that none outlives the process that asked.

The shell tool starts each command in a session of its own (so that it can kill
everything the command started), which also shields the command from the
terminal's Ctrl-C. A call that ends kills its group itself; a process that
leaves without waiting for its calls (the CLI's forced exit after Ctrl-C) kills
the groups still registered here first. Imports nothing heavy: the CLI's exit
path uses it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading

_groups: set[int] = set()
_lock = threading.Lock()


def started(group: int) -> None:
    with _lock:
        _groups.add(group)


def ended(group: int) -> None:
    with _lock:
        _groups.discard(group)


def kill_all() -> None:
    """Kill every registered group (each may have ended meanwhile)."""
    with _lock:
        groups = list(_groups)
        _groups.clear()
    for group in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
