"""Ctrl-C at the terminal: the command stops within a second, whatever the run is doing.

The first Ctrl-C raises ``KeyboardInterrupt`` as usual, so the run records how
it stopped and prints how to resume. Some work does not let go at once: a
model generating in-process on a worker thread, a pool of tasks that LangGraph
waits for. So the same Ctrl-C also starts a short grace period, after which the
process leaves without waiting for them; a second Ctrl-C leaves at once. What
the run had finished is already in the checkpoint (each step is saved before
the next starts), so ``resume`` continues from there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType

from reasoning_graphs.cli.exits import INTERRUPTED
from reasoning_graphs.tools import process_groups

GRACE_S = 1.0
"""How long the run may take to stop cleanly after Ctrl-C before the process leaves."""

resume_hint: str | None = None
"""What to print, as a note, if the process must leave before the run could say it: how
to resume."""
clear_line: Callable[[], None] | None = None
"""What erases the status line from the terminal, so that nothing is written after it."""

_pressed = threading.Event()


def install() -> None:
    """Handle Ctrl-C as described above (call it from the main thread)."""
    signal.signal(signal.SIGINT, _on_ctrl_c)


def leave(code: int = INTERRUPTED, *, hint: str | None = None) -> None:
    """End the process now, after flushing what it printed; threads still working are
    dropped, and the commands they started are killed (they run in sessions of their own,
    out of the terminal's reach)."""
    process_groups.kill_all()
    if clear_line is not None:
        clear_line()
    if hint:
        print(f"Note: {hint}", file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code)


def _on_ctrl_c(signum: int, frame: FrameType | None) -> None:
    if _pressed.is_set():
        leave(hint=resume_hint)
    _pressed.set()
    timer = threading.Timer(GRACE_S, lambda: leave(hint=resume_hint))
    timer.daemon = True
    timer.start()
    raise KeyboardInterrupt
