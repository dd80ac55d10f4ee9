"""A live status line while a step works: which step, for how long, how much the model wrote.

Some steps print nothing for minutes (a LATS search or a ReWOO plan on a small
local model), which looks like a hung program. While a step runs, one line on
stderr says which step, how long it has been running, how many tokens the
model has generated for it so far, and how far the run has come when the run
reports that itself (``expansion 3 of 8`` in a LATS search)::

    … evaluate · 41 s · 120 tokens · expansion 3 of 8 (tree: 7 nodes)

Tokens are counted from what the model streams, typed replies and tool calls
included: the model's own count where its chunks carry one (the embedded model's
do), else an estimate from the text at about four characters a token, marked
``~``, until the call reports its usage at the end. A step that runs again is
numbered (``think #4``, counted in this process) unless the run reports its own
progress. The line is drawn only when stderr is a terminal, redrawn twice a
second by a daemon thread, and wiped before anything else is printed, so it
never mixes with the output.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TextIO

from langchain_core.messages import AIMessageChunk, BaseMessage

from reasoning_graphs.nodes.tokens import CJK_TOKENS_PER_CHAR, LATIN_CHARS_PER_TOKEN, is_cjk

WIPE = "\r\033[K"
"""Back to the start of the line and erase it."""
INTERVAL_S = 0.5
"""Seconds between redraws."""


@dataclass
class _Reply:
    """The tokens of one model reply so far: reported by the model, or estimated from its text."""

    reported: int | None = None
    cjk: int = 0
    other: int = 0

    def add(self, chunk: AIMessageChunk) -> None:
        usage = chunk.usage_metadata
        if usage is not None:
            self.reported = (self.reported or 0) + usage["output_tokens"]
        text = chunk.text + "".join(part.get("args") or "" for part in chunk.tool_call_chunks)
        cjk = sum(map(is_cjk, text))
        self.cjk, self.other = self.cjk + cjk, self.other + len(text) - cjk

    @property
    def tokens(self) -> int:
        if self.reported is not None:
            return self.reported
        return math.ceil(self.cjk * CJK_TOKENS_PER_CHAR + self.other / LATIN_CHARS_PER_TOKEN)


@dataclass
class _Step:
    """A step running now: its name, when it started and the model replies it streamed."""

    name: str
    started: float
    replies: dict[str, _Reply] = field(default_factory=dict)


class StatusLine:
    """The status of the steps running now; see the module docstring."""

    def __init__(
        self,
        stream: TextIO,
        *,
        enabled: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        interval_s: float | None = None,
    ) -> None:
        """Draw on ``stream`` (by default only if it is a terminal), every ``interval_s``
        seconds (default :data:`INTERVAL_S`)."""
        self.stream = stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self.clock = clock
        self.interval_s = INTERVAL_S if interval_s is None else interval_s
        self.paused: Callable[[], bool] = lambda: False
        """Whether drawing must wait (an answer is being written on the terminal's line)."""
        self._lock = threading.RLock()
        self._running: dict[str, _Step] = {}
        self._starts: Counter[str] = Counter()
        self._progress: str | None = None
        self._shown = False
        self._stop = threading.Event()

    def started(self, task_id: str, name: str) -> None:
        """A step began: it becomes the one the line is about."""
        with self._lock:
            self._starts[name] += 1
            self._running[task_id] = _Step(name, self.clock())

    def finished(self, task_id: str) -> None:
        with self._lock:
            self._running.pop(task_id, None)
            if not self._running:
                self.wipe()

    def streamed(self, chunk: BaseMessage, metadata: Mapping[str, Any] | None = None) -> None:
        """The model streamed ``chunk``; ``metadata`` (LangGraph's, with the message) names
        the step it belongs to, else it counts for the step the line is about."""
        if not isinstance(chunk, AIMessageChunk):
            return  # a whole message a step wrote, not something the model is generating
        with self._lock:
            step = self._running.get(_task_of(metadata)) or self._latest()
            if step is not None:
                step.replies.setdefault(chunk.id or "", _Reply()).add(chunk)

    def progress(self, text: str) -> None:
        """How far the run has come, as the run reports it: shown until it reports again."""
        with self._lock:
            self._progress = text or None

    def text(self) -> str | None:
        """The line as it reads now, or ``None`` when no step runs."""
        with self._lock:
            step = self._latest()
            if step is None:
                return None
            count = self._starts[step.name]
            numbered = count > 1 and self._progress is None
            parts = [f"{step.name} #{count}" if numbered else step.name]
            parts.append(f"{self.clock() - step.started:.0f} s")
            replies = [r for s in self._running.values() for r in s.replies.values()]
            tokens = sum(reply.tokens for reply in replies)
            if tokens:
                estimated = any(reply.reported is None for reply in replies)
                parts.append(f"{'~' if estimated else ''}{tokens} tokens")
            if self._progress:
                parts.append(self._progress)
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

    def _latest(self) -> _Step | None:
        """The step started last among those running: the one the line is about."""
        return next(reversed(self._running.values()), None)

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


def _task_of(metadata: Mapping[str, Any] | None) -> str:
    """The id of the step a streamed message comes from: the last part of its checkpoint
    namespace (``execute:<id>|think:<id>``)."""
    namespace = str((metadata or {}).get("langgraph_checkpoint_ns") or "")
    return namespace.rsplit("|", 1)[-1].rpartition(":")[2]
