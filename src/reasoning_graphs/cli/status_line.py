"""A live status line while a step works: which step, for how long, what it has written so far.

Some steps print nothing for minutes (a LATS search or a ReWOO plan on a small
local model), which looks like a hung program. While a step runs, one line on
stderr says which step (``expand #3`` for the third expansion), how long it has
been running and how many pieces of text the model has streamed. It is drawn
only when stderr is a terminal, redrawn twice a second by a daemon thread, and
wiped before anything else is printed, so it never mixes with the output.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

WIPE = "\r\033[K"
"""Back to the start of the line and erase it."""
INTERVAL_S = 0.5


class StatusLine:
    """The status of the steps running now; see the module docstring."""

    def __init__(
        self,
        stream: TextIO,
        *,
        enabled: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        interval_s: float = INTERVAL_S,
    ) -> None:
        """Draw on ``stream`` (by default only if it is a terminal)."""
        self.stream = stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self.clock = clock
        self.interval_s = interval_s
        self.paused: Callable[[], bool] = lambda: False
        """Whether drawing must wait (an answer is being written on the terminal's line)."""
        self._lock = threading.RLock()
        self._running: dict[str, tuple[str, float]] = {}
        self._starts: Counter[str] = Counter()
        self._pieces = 0
        self._shown = False
        self._stop = threading.Event()

    def started(self, task_id: str, name: str) -> None:
        """A step began: it becomes the one the line is about."""
        with self._lock:
            self._starts[name] += 1
            self._running[task_id] = (name, self.clock())
            self._pieces = 0

    def finished(self, task_id: str) -> None:
        with self._lock:
            self._running.pop(task_id, None)
            if not self._running:
                self.wipe()

    def streamed(self) -> None:
        """The model streamed one more piece of text."""
        with self._lock:
            self._pieces += 1

    def text(self) -> str | None:
        """The line as it reads now, or ``None`` when no step runs."""
        with self._lock:
            if not self._running:
                return None
            name, started = list(self._running.values())[-1]
            count = self._starts[name]
            parts = [f"{name} #{count}" if count > 1 else name, f"{self.clock() - started:.0f} s"]
            if self._pieces:
                parts.append(f"{self._pieces} pieces streamed")
            others = len(self._running) - 1
            if others:
                parts.append(f"{others} more step{'s' if others > 1 else ''} running")
            return "… " + " · ".join(parts)

    def draw(self) -> None:
        """Draw the line now (when enabled, a step runs and nothing else is being written)."""
        with self._lock:
            text = self.text()
            if not self.enabled or text is None or self.paused():
                return
            self.stream.write(WIPE + text)
            self.stream.flush()
            self._shown = True

    def wipe(self) -> None:
        """Erase the line, if it is shown, so that other output starts on a clean line."""
        with self._lock:
            if self._shown:
                self.stream.write(WIPE)
                self.stream.flush()
                self._shown = False

    def __enter__(self) -> StatusLine:
        if self.enabled:
            threading.Thread(target=self._redraw, name="status-line", daemon=True).start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self.wipe()

    def _redraw(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.draw()
