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
progress. On a terminal the line is redrawn in place twice a second by a daemon
thread and wiped before anything else is printed, so it never mixes with the
output. Where stderr is a file or a pipe nobody sees a line redrawn in place, so
the same text is written there as a plain line of its own each time the steps
have worked another ``every_s`` seconds (a wait for a person does not count):
a log shows that a long run lives, however short each of its steps.
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

from reasoning_graphs.nodes.model.tokens import CJK_TOKENS_PER_CHAR, LATIN_CHARS_PER_TOKEN, is_cjk

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
        every_s: float = 0.0,
    ) -> None:
        """Draw on ``stream`` (by default only if it is a terminal), every ``interval_s``
        seconds (default :data:`INTERVAL_S`). Where it is not drawn and ``stream`` is no
        terminal, write it as a plain line after each ``every_s`` seconds of work (0: never)."""
        terminal = stream.isatty()
        self.stream = stream
        self.enabled = terminal if enabled is None else enabled
        self.every_s = 0.0 if self.enabled or terminal else every_s
        self.clock = clock
        self.interval_s = INTERVAL_S if interval_s is None else interval_s
        self._lock = threading.RLock()
        self._running: dict[str, _Step] = {}
        self._starts: Counter[str] = Counter()
        self._progress: str | None = None
        self._shown = False
        self._stop = threading.Event()
        self._due: float | None = None
        """When the next plain line is due, counting only time in which a step runs."""
        self._idle_since: float | None = None

    def started(self, task_id: str, name: str) -> None:
        """A step began: it becomes the one the line is about."""
        with self._lock:
            now = self.clock()
            if self._due is None:
                self._due = now + self.every_s
            elif self._idle_since is not None:  # a wait for a person is no work
                self._due += now - self._idle_since
            self._idle_since = None
            self._starts[name] += 1
            self._running[task_id] = _Step(name, now)

    def finished(self, task_id: str) -> None:
        with self._lock:
            self._running.pop(task_id, None)
            if not self._running:
                self._idle_since = self.clock()
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
        """Draw the line now (when enabled and a step runs)."""
        with self._lock:
            text = self.text()
            if not self.enabled or text is None or self._stop.is_set():
                return
            self.stream.write(WIPE + text)
            self.stream.flush()
            self._shown = True

    def write_if_due(self) -> None:
        """Write the line as a plain line of its own if a step has worked ``every_s`` seconds
        since the last one (when plain lines are on)."""
        with self._lock:
            now, text = self.clock(), self.text()
            if not self.every_s or self._due is None or now < self._due or text is None:
                return
            if self._stop.is_set():
                return
            self.stream.write(text + "\n")
            self.stream.flush()
            self._due = now + self.every_s

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

    def stop(self) -> None:
        """Erase the line and never draw or write it again: the command is ending."""
        with self._lock:
            self._stop.set()
            self.wipe()

    def __enter__(self) -> StatusLine:
        if self.enabled or self.every_s:
            threading.Thread(target=self._redraw, name="status-line", daemon=True).start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    def _redraw(self) -> None:
        if self.enabled:
            tick, interval_s = self.draw, self.interval_s
        else:
            tick, interval_s = self.write_if_due, min(self.interval_s, self.every_s)
        while not self._stop.wait(interval_s):
            tick()


def _task_of(metadata: Mapping[str, Any] | None) -> str:
    """The id of the step a streamed message comes from: the last part of its checkpoint
    namespace (``execute:<id>|think:<id>``)."""
    namespace = str((metadata or {}).get("langgraph_checkpoint_ns") or "")
    return namespace.rsplit("|", 1)[-1].rpartition(":")[2]
